// Builds the SDK package (sdk/): the stream client and the producer with the two files they import
// (the error catalog, the session summary's type), compiled from the same sources as the server's
// package, into sdk/dist. The SDK so carries no server code and no dependency.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('../sdk/', import.meta.url));
const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
rmSync(join(sdk, 'dist'), { recursive: true, force: true });
const build = spawnSync(process.execPath, [tsc, '-p', sdk], { stdio: 'inherit' });
process.exit(build.status ?? 1);
