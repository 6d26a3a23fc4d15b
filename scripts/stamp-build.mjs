// The last step of `npm run build`: leaves dist/.build-stamp, whose time is the build's, so that
// `npm start` (scripts/build-if-stale.mjs) knows any finished build, whoever ran it (the README,
// CI, the Dockerfile), and does not build again.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

writeFileSync(fileURLToPath(new URL('../dist/.build-stamp', import.meta.url)), `${new Date().toISOString()}\n`);
