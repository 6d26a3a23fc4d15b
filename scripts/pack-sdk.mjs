// `npm run pack:sdk [-- <folder>]`: builds the SDK (sdk/, horologium-sdk), packs it into a tarball
// (in sdk/, or the folder given) and prints the line that installs it in an agent backend's project.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('../sdk/', import.meta.url));
const destination = resolve(process.argv[2] ?? sdk);
// npm pack runs the SDK's prepack, which builds it; its own output goes to stderr.
const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: sdk, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
const tarball = resolve(destination, packed[0].filename);
process.stdout.write(`npm install ${tarball}\n`);
