/**
 * The Ruby client (clients/ruby) runs its own minitest suite against real servers it starts itself
 * (`node --import tsx src/server.ts`) and a scripted stub; it includes the seed's Artificer call
 * sites (execute_standard, execute_fallback) through Horologium::Sink.
 */
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { runClientSuite } from '../helpers/client-suite.js';

t.test('the Ruby client passes its minitest suite against real servers', async (t) => {
  await runClientSuite(t, {
    binary: process.env.RUBY ?? 'ruby',
    versionArgs: ['-e', 'print RUBY_VERSION.split(".").first(2).join(".")'],
    minimum: [3, 0],
    cwd: fileURLToPath(new URL('../../clients/ruby/', import.meta.url)),
    args: ['-Ilib', '-e', 'Dir["test/test_*.rb"].sort.each { |f| require_relative f }', '--', '-v'],
    // "Class#test_x = 0.01 s = ." (F: failed, E: error, S: skipped)
    result: /^(\w+#test_\w+) = [\d.]+ s = ([.FES])$/gm,
    passed: (mark) => mark === '.',
    atLeast: 19,
  });
});
