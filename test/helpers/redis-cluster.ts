/**
 * A Redis Cluster of the test's own: six redis-server processes (three masters, three replicas),
 * each on free ports (its own cluster bus port too) with its own directory, AOF with
 * `appendfsync always` and a 2 s node timeout, joined by `redis-cli --cluster create`. Every step
 * has a deadline; the teardown stops each process by its pid. Requires redis-server and
 * redis-cli (requireRedis skips or, under CI, fails without them).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Test } from 'tap';
import { freePort } from './process.js';
import { redisCommand } from './redis.js';
import { tempDir } from './server.js';
import { sleep } from './wait.js';

export interface ClusterNode {
  port: number;
  child: ChildProcess;
  /** Its command line (restart runs it again, on its directory and nodes.conf). */
  args: string[];
}

export interface RedisCluster {
  /** `redis+cluster://` with every node as a seed. */
  url: string;
  nodes: ClusterNode[];
  /** One command to the node on `port`; the raw reply. */
  command(port: number, ...cmd: string[]): Promise<string>;
  /** The port of the master that serves `key` now (CLUSTER KEYSLOT, then CLUSTER SHARDS' view via CLUSTER NODES). */
  masterOf(key: string): Promise<number>;
  /** SIGKILL of one node: a crash. */
  kill(port: number): Promise<void>;
  /** SIGSTOP of every live node: each still accepts connections and answers nothing (a hung cluster). */
  freeze(): void;
  /** SIGCONT of every node `freeze` stopped. */
  thaw(): void;
  /** Starts a killed node again: it rejoins the cluster (a master whose replica took over comes back as its replica). */
  restart(port: number): Promise<void>;
  /** Resolves once every live node says cluster_state:ok and every slot's master is one of them. */
  healthy(ms?: number): Promise<void>;
}

const until = async (what: string, ms: number, check: () => Promise<boolean>) => {
  for (const end = Date.now() + ms; !(await check().catch(() => false)); await sleep(100)) {
    if (Date.now() > end) throw new Error(`redis cluster: waited ${ms} ms for ${what}`);
  }
};

export async function startRedisCluster(t: Test, size = 6): Promise<RedisCluster> {
  const nodes: ClusterNode[] = [];
  t.teardown(async () => {
    for (const node of nodes) {
      if (node.child.exitCode !== null || node.child.signalCode !== null) continue;
      const exited = once(node.child, 'exit');
      node.child.kill('SIGKILL');
      await exited;
    }
  });
  // A node whose ports another process took between freePort and its bind exits at once: it is
  // started again on other ports (a few times), rather than waited for.
  const startNode = async (): Promise<ClusterNode> => {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const bus = await freePort();
      const dir = tempDir(t);
      const args = ['--port', String(port), '--cluster-port', String(bus), '--bind', '127.0.0.1', '--dir', dir, '--protected-mode', 'no', '--save', '', '--loglevel', 'warning'];
      // cluster-require-full-coverage no: while one master is down, the others go on serving their slots.
      args.push('--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', '--cluster-require-full-coverage', 'no');
      args.push('--appendonly', 'yes', '--appendfsync', 'always');
      const node = { port, args, child: spawn('redis-server', args, { stdio: 'ignore' }) };
      nodes.push(node);
      const exited = () => node.child.exitCode !== null || node.child.signalCode !== null;
      await until(`the node on ${port}`, 20_000, async () => exited() || (await redisCommand(port, 'PING')).startsWith('+PONG'));
      if (!exited()) return node;
      nodes.splice(nodes.indexOf(node), 1);
      if (attempt === 3) throw new Error(`redis cluster: a node exited at start three times (last on ports ${port}, ${bus})`);
    }
  };
  for (let k = 0; k < size; k++) await startNode();
  const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', size >= 6 ? '1' : '0', '--cluster-yes'], {
    timeout: 30_000,
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  const live = () => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
  const cluster: RedisCluster = {
    url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    nodes,
    command: redisCommand,
    async masterOf(key) {
      const port = live()[0]?.port as number;
      const slot = Number(/:(\d+)/.exec(await redisCommand(port, 'CLUSTER', 'KEYSLOT', key))?.[1]);
      const text = await redisCommand(port, 'CLUSTER', 'NODES');
      for (const line of text.split('\n')) {
        const [, address, flags, , , , , , ...ranges] = line.split(' ');
        if (!flags?.includes('master') || flags.includes('fail')) continue;
        for (const range of ranges) {
          const [from, to] = range.split('-').map(Number) as [number, number?];
          if (slot >= from && slot <= (to ?? from)) return Number(address?.split(':')[1]?.split('@')[0]);
        }
      }
      throw new Error(`no master serves slot ${slot}`);
    },
    async kill(port) {
      const node = nodes.find((n) => n.port === port);
      if (!node || node.child.exitCode !== null || node.child.signalCode !== null) return;
      const exited = once(node.child, 'exit');
      node.child.kill('SIGKILL');
      await exited;
    },
    freeze() {
      for (const node of live()) node.child.kill('SIGSTOP');
    },
    thaw() {
      for (const node of live()) node.child.kill('SIGCONT');
    },
    async restart(port) {
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`no node on ${port}`);
      node.child = spawn('redis-server', node.args, { stdio: 'ignore' });
      await until(`the node on ${port} back`, 10_000, async () => (await redisCommand(port, 'PING')).startsWith('+PONG'));
    },
    async healthy(ms = 20_000) {
      await until('cluster_state:ok and every slot served, on every live node', ms, async () => {
        for (const { port } of live()) {
          const info = await redisCommand(port, 'CLUSTER', 'INFO');
          if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) return false;
        }
        return true;
      });
    },
  };
  await cluster.healthy();
  // Every node knows every other, and every replica has its master's data: the cluster as a
  // service would find it.
  await until('every node to know all six and every replica in sync', 20_000, async () => {
    for (const { port } of nodes) {
      if (!(await redisCommand(port, 'CLUSTER', 'INFO')).includes(`cluster_known_nodes:${size}`)) return false;
      const replication = await redisCommand(port, 'INFO', 'replication');
      if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
    }
    return true;
  });
  return cluster;
}
