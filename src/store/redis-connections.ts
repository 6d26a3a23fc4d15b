/**
 * The Redis backend's three connections, on a single Redis (`redis://`, `rediss://`) or on a Redis
 * Cluster (`redis+cluster://host1:port1,host2:port2,…`, `rediss+cluster://` for TLS; a user and
 * password go before the hosts as in `redis://`): the command connection (scripts, reads), the
 * sharded subscriber (SSUBSCRIBE to the sessions' channels: on a cluster, ioredis keeps one
 * subscriber per master and sends each channel to the master of its slot), and the classic
 * subscriber of the sessions channel. A Cluster has the same command API as a Redis connection,
 * so the rest of the backend is written once, against `Redis`.
 *
 * No command is queued while its node is away or resent after a lost reply (a write retried after
 * a lost reply could apply twice): it fails, and the request gets 503. Redirections (MOVED, ASK)
 * and a cluster that is down (CLUSTERDOWN, TRYAGAIN) refuse a command before it runs, so ioredis
 * may retry those.
 *
 * Deadlines (HOROLOGIUM_STORE_TIMEOUT): a link that drops packets without closing (a half-open
 * partition) must not hang a request. Every command fails when no reply came within the timeout
 * (ioredis commandTimeout), a connection that was sent a command and received nothing for that
 * long is destroyed and made again (socketTimeout), so later commands do not queue behind it, and a
 * connection attempt gives up after a second (connectTimeout). Idle connections are checked by the
 * store's health ping (redis-health.ts) and TCP keep-alive.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export interface RedisConnections {
  commands: Redis;
  sharded: Redis;
  watcher: Redis;
  /** The nodes that hold data (the one Redis, or a cluster's masters now), in a stable order: the sweep scans each. */
  masters(): Redis[];
  /** Emitted (with no argument) when the sharded subscriber's channels may have been subscribed again (after a loss). */
  resubscribedEvent: string;
  /** Resolves once the sharded subscribers know where each slot is (a cluster's first slots refresh), or after a few seconds. */
  subscribersReady: Promise<unknown>;
  /** A command failed: a cluster reads its slots map again (a failover may have moved them). */
  troubled(): void;
  /** The connections the health check pings now (redis-health.ts). */
  probed(): Redis[];
  /** Those whose health is the store's readiness: the command connection, or a cluster's masters. */
  essential(): Redis[];
}

/** A `redis+cluster://` URL's parts, or undefined for another URL. */
export function parseClusterUrl(url: string): { nodes: Array<{ host: string; port: number }>; username?: string; password?: string; tls: boolean } | undefined {
  const match = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?$/.exec(url);
  if (!match) return undefined;
  const [, scheme, credentials, hosts] = match as unknown as [string, string, string | undefined, string];
  const nodes = hosts.split(',').map((hostPort) => {
    const at = hostPort.lastIndexOf(':');
    const port = at < 0 ? 6379 : Number(hostPort.slice(at + 1));
    if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`HOROLOGIUM_STORE: "${hostPort}" is not host:port`);
    return { host: at < 0 ? hostPort : hostPort.slice(0, at).replace(/^\[|\]$/g, ''), port };
  });
  const parts: { username?: string; password?: string } = {};
  if (credentials !== undefined) {
    const colon = credentials.indexOf(':');
    if (colon < 0) parts.password = decodeURIComponent(credentials);
    else {
      if (colon > 0) parts.username = decodeURIComponent(credentials.slice(0, colon));
      parts.password = decodeURIComponent(credentials.slice(colon + 1));
    }
  }
  return { nodes, ...parts, tls: scheme === 'rediss' };
}

// Reconnect attempts: 100 ms more each time, at most a second apart, so a healed link is used again
// within about a second.
const retry = (times: number) => Math.min(100 * times, 1000);
/** TCP keep-alive's first probe after this long idle (ms). */
const KEEP_ALIVE_MS = 5000;
// RESP2, as ioredis 5 spoke (ioredis 6 defaults to RESP3): the replies the backend reads (script
// results, SCAN, pub/sub messages) keep the shapes it was written and tested against.
const protocol = 2;
/** What every connection has: the deadlines above, keep-alive, no resend of a command after a loss. */
const deadlines = (timeoutMs: number) =>
  ({
    commandTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // At most a second for a TCP connection, so that attempts during an outage come often enough for
    // a healed link to be found within two seconds.
    connectTimeout: Math.min(timeoutMs, 1000),
    keepAlive: KEEP_ALIVE_MS,
    autoResendUnfulfilledCommands: false,
  }) satisfies RedisOptions;

export function redisConnections(url: string, timeoutMs: number, natMap?: ClusterOptions['natMap']): RedisConnections {
  const common = { lazyConnect: true, retryStrategy: retry, protocol, ...deadlines(timeoutMs) } satisfies RedisOptions;
  const commandOptions = { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResubscribe: false } satisfies RedisOptions;
  const subscriberOptions = { ...common, enableOfflineQueue: false, autoResubscribe: false, maxRetriesPerRequest: null } satisfies RedisOptions;
  const cluster = parseClusterUrl(url);
  if (!cluster) {
    const commands = new Redis(url, commandOptions);
    const sharded = new Redis(url, subscriberOptions);
    const watcher = new Redis(url, subscriberOptions);
    return {
      commands,
      sharded,
      watcher,
      masters: () => [commands],
      probed: () => [commands, sharded, watcher],
      essential: () => [commands],
      resubscribedEvent: 'ready',
      subscribersReady: Promise.resolve(),
      troubled: () => undefined,
    };
  }
  // A node's connection is made when the cluster first sends it a command, which waits for it (its
  // offline queue holds only commands not yet written, so nothing runs twice); a node that cannot
  // be reached fails the commands at once (maxRetriesPerRequest 0).
  const node: RedisOptions = {
    protocol,
    ...deadlines(timeoutMs),
    maxRetriesPerRequest: 0,
    ...(cluster.username === undefined ? {} : { username: cluster.username }),
    ...(cluster.password === undefined ? {} : { password: cluster.password }),
    ...(cluster.tls ? { tls: {} } : {}),
  };
  const options: ClusterOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    scaleReads: 'master',
    clusterRetryStrategy: retry,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    slotsRefreshTimeout: timeoutMs,
    // The slots map is read again every second (and at once after a failed command, `troubled`):
    // a master that died stops being asked once its replica has taken over.
    slotsRefreshInterval: 1000,
    redisOptions: node,
    // Nodes behind NAT (Docker, Kubernetes) announce addresses clients cannot reach: each is reached
    // where HOROLOGIUM_REDIS_NAT_MAP says.
    ...(natMap ? { natMap } : {}),
  };
  // Typed as Redis: a Cluster answers the same commands (ioredis's Commander), routed by key slot.
  const commands = new Cluster(cluster.nodes, options) as unknown as Redis;
  const sharded = new Cluster(cluster.nodes, { ...options, shardedSubscribers: true }) as unknown as Redis;
  const watcher = new Cluster(cluster.nodes, options) as unknown as Redis;
  const masters = () =>
    (commands as unknown as Cluster)
      .nodes('master')
      .sort((a, b) => `${a.options.host}:${a.options.port}`.localeCompare(`${b.options.host}:${b.options.port}`));
  // A subscription sent before the subscribers know the slots may go to one being replaced.
  const subscribersReady = Promise.race([new Promise((resolve) => sharded.once('subscribersReady', resolve)), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
  const troubled = () => (commands as unknown as Cluster).refreshSlotsCache();
  // The command nodes and the sessions-channel watcher's are pinged; the sharded subscribers are
  // ioredis's own (one per master), made again by it when their node's connection ends.
  const probed = () => [...(commands as unknown as Cluster).nodes('all'), ...(watcher as unknown as Cluster).nodes('all')];
  return { commands, sharded, watcher, masters, probed, essential: masters, resubscribedEvent: 'subscribersReady', subscribersReady, troubled };
}
