/** The process `npm start` runs: the server, configured by the environment (src/serve.ts). */
import { runServer } from './serve.js';

await runServer(process.env);
