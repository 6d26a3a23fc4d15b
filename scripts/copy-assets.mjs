// The build's second step: files tsc does not emit (the Redis Lua scripts) are copied beside
// the compiled JavaScript, at the same place under dist/ as under src/.
import { cpSync } from 'node:fs';

for (const dir of ['store/lua']) cpSync(new URL(`../src/${dir}`, import.meta.url), new URL(`../dist/${dir}`, import.meta.url), { recursive: true });
