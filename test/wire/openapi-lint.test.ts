/**
 * The OpenAPI document passes Redocly's recommended rules (`npx redocly lint`, @redocly/cli from
 * the lock file) with no error and no warning beyond the three explained in .redocly.lint-ignore.yaml,
 * and says what a client needs: an operationId for every operation, the license, and the 429 and
 * 503 replies (with Retry-After) on every endpoint that can send them.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { openApiDocument } from '../../src/wire/openapi.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

t.test('redocly lint: no errors, no warnings', async (t) => {
  const lint = spawnSync(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', 'schemas/openapi.json', '--format=summary'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  const output = `${lint.stdout}${lint.stderr}`;
  t.equal(lint.status, 0, output);
  t.notMatch(output, /^(error|warning) /m, 'no problem left');
  t.match(output, /3 problems are explicitly ignored/, 'only the three of .redocly.lint-ignore.yaml');
  t.match(output, /Your API description is valid/);
});

t.test('every operation has an operationId, 429 and 503 are described', async (t) => {
  const doc = openApiDocument() as { info: { license?: { name: string } }; paths: Record<string, Record<string, { operationId?: string; responses: Record<string, { headers?: object }> }>> };
  t.same(doc.info.license, { name: 'MIT', identifier: 'MIT' });
  const ids: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      t.type(op.operationId, 'string', `${method.toUpperCase()} ${path} has an operationId`);
      ids.push(op.operationId as string);
      if (path.startsWith('/v1/') && path !== '/v1/stream') {
        t.ok(op.responses['429']?.headers && op.responses['503']?.headers, `${method.toUpperCase()} ${path}: 429 and 503 with Retry-After`);
      }
    }
  }
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  const stream = doc.paths['/v1/stream']?.get?.responses ?? {};
  t.same(Object.keys(stream).sort(), ['101', '400', '401', '403', '426', '429', '503']);
});
