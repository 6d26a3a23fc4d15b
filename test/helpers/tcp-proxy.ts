/**
 * A TCP fault proxy in front of a service, for faults of one client's link only (other clients of
 * the same service connect directly). Modes:
 * - `pass`: bytes go through as they come;
 * - `delay`: each chunk is held `delayMs` in each direction (a slow link);
 * - `blackhole`: a half-open partition: connections stay open, every byte either way is dropped,
 *   and nothing closes (a close on one side reaches the other only once the link is back); new
 *   connections are accepted and get nothing either;
 * - `reset()`: every connection through it is reset now (RST), as a restarted NAT or peer does.
 * `cut()` resets every connection and refuses new ones until `restore()` (a refused port).
 */
import { connect, createServer, type Socket } from 'node:net';
import type { Test } from 'tap';

export type ProxyMode = { kind: 'pass' } | { kind: 'delay'; delayMs: number } | { kind: 'blackhole' };

export interface TcpProxy {
  port: number;
  /** Changes how bytes and closes travel from now on. */
  mode(mode: ProxyMode): void;
  /** Resets every connection through the proxy now. */
  reset(): void;
  cut(): void;
  restore(): void;
  /** Connections open through the proxy now. */
  readonly connections: number;
}

interface Link {
  inbound: Socket;
  outbound: Socket;
  /** A close seen while black-holed, delivered once the link is back. */
  pendingClose: boolean;
}

export async function startTcpProxy(t: Test, targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const links = new Set<Link>();
  let refusing = false;
  let current: ProxyMode = { kind: 'pass' };

  const closeLink = (link: Link) => {
    links.delete(link);
    link.inbound.destroy();
    link.outbound.destroy();
  };

  const server = createServer((inbound) => {
    if (refusing) {
      inbound.resetAndDestroy();
      return;
    }
    const outbound = connect(targetPort, targetHost);
    const link: Link = { inbound, outbound, pendingClose: false };
    links.add(link);
    for (const [from, to] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      from.on('data', (chunk: Buffer) => {
        if (current.kind === 'blackhole') return; // dropped, as a partition drops packets
        if (current.kind === 'delay') {
          const held = setTimeout(() => to.destroyed || to.write(chunk), current.delayMs);
          held.unref();
          return;
        }
        if (!to.destroyed) to.write(chunk);
      });
      from.on('error', () => undefined);
      from.on('close', () => {
        if (current.kind === 'blackhole') link.pendingClose = true;
        else closeLink(link);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const link of links) closeLink(link);
    server.close();
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');

  const reset = () => {
    for (const link of [...links]) {
      links.delete(link);
      link.inbound.resetAndDestroy();
      link.outbound.resetAndDestroy();
    }
  };
  return {
    port: address.port,
    mode(mode) {
      current = mode;
      if (mode.kind !== 'blackhole') for (const link of [...links]) if (link.pendingClose) closeLink(link);
    },
    reset,
    cut() {
      refusing = true;
      reset();
    },
    restore() {
      refusing = false;
    },
    get connections() {
      return links.size;
    },
  };
}
