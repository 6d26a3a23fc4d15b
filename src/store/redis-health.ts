/**
 * Finds dead Redis links without waiting for traffic (issue 45): every second each connection the
 * backend holds is sent a PING with the store's deadline (ioredis commandTimeout). A connection
 * whose ping fails or goes unanswered is torn down and made again (ioredis reconnects it; the
 * backend re-subscribes a subscriber and fills its gap from the log, as after a reset). A
 * connection stuck in its handshake (TCP up, the ready check unanswered: a half-open link) is torn
 * down after HANDSHAKE_MS, so a healed link is used again within about a second and a half.
 *
 * Readiness is what the pings said last, known at once: /readyz never waits on a silent link.
 */
import type { Redis } from 'ioredis';

/** How often each connection is pinged. */
const PING_INTERVAL_MS = 1000;
/** How long a connection may sit between TCP connect and ready (its ready check) before it is made again. */
const HANDSHAKE_MS = 1000;

interface Probe {
  /** A ping is under way (one at a time per connection). */
  pinging: boolean;
  /** The last ping (or handshake) succeeded, and the connection has been ready since. */
  healthy: boolean;
  /** The handshake deadline of the connection's current attempt. */
  handshake?: NodeJS.Timeout;
}

export interface HealthEvents {
  /** A connection answered a ping. */
  pinged(at: number): void;
  /** A connection was torn down for want of an answer. */
  timedOut(): void;
}

export class RedisHealth {
  private readonly probes = new Map<Redis, Probe>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** The connections to check now (a cluster's nodes change with its slots). */
    private readonly connections: () => Redis[],
    /** The ones whose health is readiness (the command connections; a cluster's masters). */
    private readonly essential: () => Redis[],
    private readonly events: HealthEvents,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), PING_INTERVAL_MS);
    this.timer.unref();
    this.tick();
  }

  stop(): void {
    clearInterval(this.timer);
    for (const probe of this.probes.values()) clearTimeout(probe.handshake);
    this.probes.clear();
  }

  /** Every essential connection is ready and answered its last ping. */
  get healthy(): boolean {
    const essential = this.essential();
    return essential.length > 0 && essential.every((c) => c.status === 'ready' && this.probeOf(c).healthy);
  }

  private probeOf(connection: Redis): Probe {
    let probe = this.probes.get(connection);
    if (!probe) {
      probe = { pinging: false, healthy: connection.status === 'ready' };
      this.probes.set(connection, probe);
      const known = probe;
      // A new attempt's handshake gets HANDSHAKE_MS; a connection that becomes ready has answered.
      connection.on('connect', () => {
        clearTimeout(known.handshake);
        known.handshake = setTimeout(() => {
          if (connection.status === 'connect') this.tearDown(connection);
        }, HANDSHAKE_MS);
        known.handshake.unref();
      });
      connection.on('ready', () => {
        clearTimeout(known.handshake);
        known.healthy = true;
        this.events.pinged(Date.now());
      });
      connection.on('close', () => (known.healthy = false));
    }
    return probe;
  }

  private tick(): void {
    const live = new Set(this.connections());
    for (const [connection, probe] of this.probes) {
      if (!live.has(connection)) {
        clearTimeout(probe.handshake);
        this.probes.delete(connection);
      }
    }
    for (const connection of live) {
      const probe = this.probeOf(connection);
      if (connection.status !== 'ready') {
        probe.healthy = false;
        continue;
      }
      if (probe.pinging) continue;
      probe.pinging = true;
      connection.ping().then(
        () => {
          probe.pinging = false;
          probe.healthy = true;
          this.events.pinged(Date.now());
        },
        () => {
          probe.pinging = false;
          probe.healthy = false;
          // Its socket may already be gone (socketTimeout); if not, it is made again now.
          if (connection.status === 'ready') this.tearDown(connection);
        },
      );
    }
  }

  private tearDown(connection: Redis): void {
    this.events.timedOut();
    connection.disconnect(true);
  }
}
