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

const retry = (times: number) => Math.min(100 * times, 2000);
// RESP2, as ioredis 5 spoke (ioredis 6 defaults to RESP3): the replies the backend reads (script
// results, SCAN, pub/sub messages) keep the shapes it was written and tested against.
const protocol = 2;
const common = { lazyConnect: true, retryStrategy: retry, protocol } satisfies RedisOptions;
const commandOptions = { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResubscribe: false } satisfies RedisOptions;
const subscriberOptions = { ...common, enableOfflineQueue: false, autoResendUnfulfilledCommands: false, autoResubscribe: false, maxRetriesPerRequest: null } satisfies RedisOptions;

export function redisConnections(url: string): RedisConnections {
  const cluster = parseClusterUrl(url);
  if (!cluster) {
    const commands = new Redis(url, commandOptions);
    return {
      commands,
      sharded: new Redis(url, subscriberOptions),
      watcher: new Redis(url, subscriberOptions),
      masters: () => [commands],
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
    connectTimeout: 2000,
    autoResendUnfulfilledCommands: false,
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
    slotsRefreshTimeout: 2000,
    // The slots map is read again every second (and at once after a failed command, `troubled`):
    // a master that died stops being asked once its replica has taken over.
    slotsRefreshInterval: 1000,
    redisOptions: node,
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
  return { commands, sharded, watcher, masters, resubscribedEvent: 'subscribersReady', subscribersReady, troubled };
}
