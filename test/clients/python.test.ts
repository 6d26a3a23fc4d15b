/**
 * The Python client (clients/python) runs its own suite, `python3 -m unittest`, against real
 * servers it starts itself (`node --import tsx src/server.ts`, as `npm start` would) and a scripted
 * stub for the failures a real server cannot produce on demand.
 */
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { runClientSuite } from '../helpers/client-suite.js';

t.test('the Python client passes its unittest suite against real servers', async (t) => {
  await runClientSuite(t, {
    binary: process.env.PYTHON ?? 'python3',
    versionArgs: ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'],
    minimum: [3, 9],
    cwd: fileURLToPath(new URL('../../clients/python/', import.meta.url)),
    args: ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'],
    // "test_x (tests.module.Class.test_x) ... ok" (or FAIL / ERROR)
    result: /^test_\w+ \(([\w.]+)\)[^\n]*? \.\.\. (ok|FAIL|ERROR|skipped.*)$/gm,
    passed: (mark) => mark === 'ok',
    atLeast: 20,
  });
});
