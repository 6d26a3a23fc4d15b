import { RedisStore } from './src/store/redis.js';
import { execSync } from 'node:child_process';
const store = new RedisStore('redis+cluster://127.0.0.1:27001,127.0.0.1:27002,127.0.0.1:27003', { historySize: 10, waitReplicas: Number(process.argv[2]) });
await store.open();
// a session on the master of 27001's slots
const nodes = execSync('redis-cli -p 27001 cluster nodes').toString();
console.log(nodes.split('\n').filter((l) => l.includes('master')).map((l) => l.split(' ').slice(1, 3).join(' ')).join(' | '));
let victim = '';
for (let k = 0; ; k++) {
  const slot = Number(execSync(`redis-cli -p 27001 cluster keyslot 'horologium:{v${k}}:heads'`).toString());
  const owner = nodes.split('\n').find((l) => l.includes('master') && l.includes('myself'));
  const ranges = (owner ?? '').split(' ').slice(8);
  if (ranges.some((r) => { const [a, b] = r.split('-').map(Number); return slot >= a! && slot <= (b ?? a!); })) { victim = `v${k}`; break; }
}
console.log('victim', victim);
console.log(await store.appendEvent(victim, 'note', '{}').then(() => 'ok', (e) => e.message));
const pid = /process_id:(\d+)/.exec(execSync('redis-cli -p 27001 info server').toString())![1];
process.kill(Number(pid), 'SIGKILL');
const t0 = Date.now();
for (let k = 0; k < 40; k++) {
  const r = await store.appendEvent(victim, 'note', '{}').then(() => 'ok', (e) => e.message);
  console.log(((Date.now() - t0) / 1000).toFixed(1), r.slice(0, 150));
  if (r === 'ok') break;
  await new Promise((res) => setTimeout(res, 500));
}
await store.close();
