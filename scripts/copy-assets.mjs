// The build's second step: files tsc does not emit (the Redis Lua scripts) are copied beside
// the compiled JavaScript, at the same place under dist/ as under src/, and the CLI is made
// executable (npm does this when installing a bin, but not for `node dist/cli/main.js`'s sake in a clone).
import { chmodSync, cpSync } from 'node:fs';

for (const dir of ['store/lua']) cpSync(new URL(`../src/${dir}`, import.meta.url), new URL(`../dist/${dir}`, import.meta.url), { recursive: true });
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
