// `npm start`: builds dist/ when a source is newer than the last build (build-if-stale.mjs), then runs
// the server in this same process. One Node.js process instead of a prestart hook and a second
// process saves their start-up (about 0.1 s of the promise to answer /healthz within a second).
// Node 22+: V8's compile cache (in the OS temporary folder) makes later starts faster; Node 20 has none.
(await import('node:module')).enableCompileCache?.();
await import('./build-if-stale.mjs');
await import('../dist/server.js');
