/** The process `npm start` runs: the server, configured by the environment (src/run-server.ts). */
import { runServer } from './run-server.js';

await runServer(process.env);
