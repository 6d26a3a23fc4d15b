#!/usr/bin/env node
// The `horologium` command. In a clone (scripts/ beside it), it first builds dist/ when a source is
// newer than the last build, saying so on stderr, so that `npx horologium` works right after
// `npm ci` without a separate build; an installed package has no scripts/ and runs dist/ at once.
import { existsSync } from 'node:fs';

const buildIfStale = new URL('../scripts/build-if-stale.mjs', import.meta.url);
if (existsSync(buildIfStale)) await import(buildIfStale.href);
await import(new URL('../dist/cli/main.js', import.meta.url).href);
