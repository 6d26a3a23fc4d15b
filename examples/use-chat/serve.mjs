/** Serves dist/ on http://127.0.0.1:5173 (PORT to change it): open it with ?server=…&session=…. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), 'dist');
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };
const port = Number(process.env.PORT ?? 5173);
createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const file = path === '/' ? 'index.html' : path.slice(1);
  if (!(file in { 'index.html': 1, 'app.js': 1 })) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': types[file.slice(file.lastIndexOf('.'))] }).end(readFileSync(join(dist, file)));
}).listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${port}/?server=http://127.0.0.1:8080&session=demo`));
