/**
 * A TCP proxy in front of a service, for outages of one client only: `cut()` drops every
 * connection through it and refuses new ones until `restore()`, while other clients of the same
 * service (connected directly) go on.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { Test } from 'tap';

export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
}

export async function startTcpProxy(t: Test, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let open = true;
  const server = createServer((inbound) => {
    if (!open) {
      inbound.destroy();
      return;
    }
    const outbound = connect(targetPort, '127.0.0.1');
    for (const [a, b] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    port: address.port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
  };
}
