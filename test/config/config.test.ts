import t from 'tap';
import { loadConfig } from '../../src/config/config.js';
import { freePort, runToExit, spawnServer } from '../helpers/process.js';

t.test('defaults are those of docs/protocol.md section 8', async (t) => {
  const c = loadConfig({});
  t.match(c, {
    port: 8080,
    host: '127.0.0.1',
    store: 'sqlite:./data/horologium.db',
    previewLimit: 4000,
    historySize: 1000,
    heartbeatMs: 20000,
    maxBufferedBytes: 4194304,
    bodyLimit: 16777216,
    logLevel: 'info',
    insecure: false,
  });
  t.same([...c.passthroughTools], ['read_file']);
  t.equal(c.auth.open, true);
});

t.test('every variable is read', async (t) => {
  const c = loadConfig({
    PORT: '9000',
    HOST: '::1',
    HOROLOGIUM_STORE: 'memory:',
    HOROLOGIUM_PREVIEW_LIMIT: '80',
    HOROLOGIUM_PASSTHROUGH_TOOLS: 'read_file, cat',
    HOROLOGIUM_HISTORY_SIZE: '5',
    HOROLOGIUM_HEARTBEAT_MS: '1000',
    HOROLOGIUM_MAX_BUFFERED_BYTES: '65536',
    HOROLOGIUM_BODY_LIMIT: '2048',
    HOROLOGIUM_ALLOWED_ORIGINS: 'https://a.example,https://b.example',
    HOROLOGIUM_TOKENS: JSON.stringify([{ token: 'x'.repeat(32), scopes: ['publish'], sessions: ['team-a:*'] }]),
    LOG_LEVEL: 'debug',
  });
  t.match(c, { port: 9000, host: '::1', store: 'memory:', previewLimit: 80, historySize: 5, heartbeatMs: 1000, maxBufferedBytes: 65536, bodyLimit: 2048, logLevel: 'debug' });
  t.same([...c.passthroughTools], ['read_file', 'cat']);
  t.same(c.allowedOrigins, ['https://a.example', 'https://b.example']);
  t.equal(c.auth.open, false);
  t.equal(c.auth.tokens.length, 1);
});

t.test('an invalid value names the variable', async (t) => {
  const bad: Record<string, string> = {
    PORT: 'eighty',
    HOROLOGIUM_STORE: 'mysql://x',
    HOROLOGIUM_PREVIEW_LIMIT: '3',
    HOROLOGIUM_HISTORY_SIZE: '0',
    HOROLOGIUM_HEARTBEAT_MS: '-5',
    HOROLOGIUM_MAX_BUFFERED_BYTES: '1e6',
    HOROLOGIUM_BODY_LIMIT: 'lots',
    HOROLOGIUM_INSECURE: 'yes',
    HOROLOGIUM_TOKENS: '[{"token":"short"}]',
    LOG_LEVEL: 'loud',
  };
  for (const [name, value] of Object.entries(bad)) {
    t.throws(() => loadConfig({ [name]: value }), { name: 'ConfigError' }, name);
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      t.match((err as Error).message, name, `${name} is named`);
    }
  }
});

t.test('a static token with a scope that does not exist stops start-up, naming it', async (t) => {
  const tokens = JSON.stringify([{ token: 'x'.repeat(32), scopes: ['subscribe', 'publisher'], sessions: ['*'] }]);
  t.throws(() => loadConfig({ HOROLOGIUM_TOKENS: tokens }), { name: 'ConfigError', message: /HOROLOGIUM_TOKENS: .*"publisher" is not a scope \(the scopes: publish, consume, subscribe, admin\)/ });
});

t.test('open mode listens on loopback only unless HOROLOGIUM_INSECURE=1', async (t) => {
  t.throws(() => loadConfig({ HOST: '0.0.0.0' }), /HOROLOGIUM_INSECURE/);
  t.equal(loadConfig({ HOST: '0.0.0.0', HOROLOGIUM_INSECURE: '1' }).host, '0.0.0.0');
  t.equal(loadConfig({ HOST: '0.0.0.0', HOROLOGIUM_JWT_SECRET: 's'.repeat(32) }).host, '0.0.0.0');
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) t.equal(loadConfig({ HOST: host }).host, host);
});

t.test('the server stops at start-up with the message', async (t) => {
  const r = await runToExit({ HOROLOGIUM_HISTORY_SIZE: 'many', HOROLOGIUM_STORE: 'memory:' });
  t.equal(r.code, 2);
  t.match(r.output, /HOROLOGIUM_HISTORY_SIZE: HOROLOGIUM_HISTORY_SIZE must be a whole number/);
});

t.test('with auth configured the server starts, on a non-loopback address too', async (t) => {
  const port = await freePort();
  const server = await spawnServer(t, { HOROLOGIUM_STORE: 'memory:', HOROLOGIUM_JWT_SECRET: 's'.repeat(40), HOST: '0.0.0.0', PORT: String(port) });
  t.equal((await fetch(`${server.url}/healthz`)).status, 200);
  t.equal((await fetch(`${server.url}/v1/sessions/s/events`)).status, 401, 'and it asks for a token');
});

t.test('a JWT public key that is not a usable PEM key stops start-up', async (t) => {
  const r = await runToExit({ HOROLOGIUM_STORE: 'memory:', HOROLOGIUM_JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\\nnope\\n-----END PUBLIC KEY-----', PORT: '0' });
  t.equal(r.code, 2);
  t.match(r.output, /HOROLOGIUM_JWT_PUBLIC_KEY: HOROLOGIUM_JWT_PUBLIC_KEY must be a PEM public key/);
});

t.test('retention durations: 0 or a number with ms, s, m, h or d; anything else stops start-up', async (t) => {
  const base = { HOROLOGIUM_STORE: 'memory:' };
  t.same([loadConfig(base).retainAckedMs, loadConfig(base).sessionTtlMs], [86_400_000, 0], 'defaults: 24h, and no TTL');
  const cases: Array<[string, number]> = [['0', 0], ['250ms', 250], ['90s', 90_000], ['1.5m', 90_000], ['2h', 7_200_000], ['7d', 604_800_000]];
  for (const [text, ms] of cases) {
    t.equal(loadConfig({ ...base, HOROLOGIUM_RETAIN_ACKED: text }).retainAckedMs, ms, text);
    t.equal(loadConfig({ ...base, HOROLOGIUM_SESSION_TTL: text }).sessionTtlMs, ms, text);
  }
  for (const bad of ['24', '1 h', '-1h', 'h', '1y', '1.h', '0s5']) {
    t.throws(() => loadConfig({ ...base, HOROLOGIUM_SESSION_TTL: bad }), { message: /HOROLOGIUM_SESSION_TTL: HOROLOGIUM_SESSION_TTL must be 0 or a non-negative number followed by ms, s, m, h or d/ }, bad);
  }
  t.equal(loadConfig(base).retentionIntervalMs, 60_000, 'the sweep runs every minute with the defaults');
  t.equal(loadConfig({ ...base, HOROLOGIUM_SESSION_TTL: '2s' }).retentionIntervalMs, 500, 'a quarter of a short TTL');
  t.equal(loadConfig({ ...base, HOROLOGIUM_SESSION_TTL: '100ms' }).retentionIntervalMs, 250, 'at least 250 ms');
  t.equal(loadConfig({ ...base, HOROLOGIUM_SESSION_TTL: '2s', HOROLOGIUM_RETENTION_INTERVAL: '0' }).retentionIntervalMs, 0, 'unless set');
  const r = await runToExit({ ...base, HOROLOGIUM_RETAIN_ACKED: 'forever' });
  t.equal(r.code, 2);
  t.match(r.output, /HOROLOGIUM_RETAIN_ACKED: HOROLOGIUM_RETAIN_ACKED must be 0 or a non-negative number/);
});

t.test('tracing by OpenTelemetry variables: off unless OTEL_TRACES_EXPORTER=otlp; the protocol and content capture; unsupported values stop start-up', async (t) => {
  t.equal(loadConfig({}).tracing, undefined, 'off by default');
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing, undefined, 'an endpoint alone does not turn it on');
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'none' }).tracing, undefined);
  t.same(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing, { protocol: 'http/protobuf', captureContent: false }, 'http/protobuf, the OTLP default');
  t.same(loadConfig({ OTEL_TRACES_EXPORTER: 'OTLP', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'True' }).tracing, { protocol: 'http/json', captureContent: true });
  t.same(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).tracing?.protocol, 'http/protobuf', 'the traces-specific variable wins');
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).tracing, undefined, 'OTEL_SDK_DISABLED=true turns it off');
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'yes' }).tracing?.captureContent, false, 'only "true" is true');
  t.throws(() => loadConfig({ OTEL_TRACES_EXPORTER: 'jaeger' }), /OTEL_TRACES_EXPORTER: jaeger is not supported; use otlp/);
  t.throws(() => loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
});

t.test('HOROLOGIUM_STORE_TIMEOUT and HOROLOGIUM_REDIS_NAT_MAP', async (t) => {
  t.equal(loadConfig({}).storeTimeoutMs, 2000, 'the timeout is 2 s by default');
  t.equal(loadConfig({ HOROLOGIUM_STORE_TIMEOUT: '500ms' }).storeTimeoutMs, 500);
  t.throws(() => loadConfig({ HOROLOGIUM_STORE_TIMEOUT: '10ms' }), /HOROLOGIUM_STORE_TIMEOUT must be at least 100ms/);
  t.throws(() => loadConfig({ HOROLOGIUM_STORE_TIMEOUT: 'soon' }), /HOROLOGIUM_STORE_TIMEOUT must be 0 or a non-negative number/);
  t.same(loadConfig({ HOROLOGIUM_REDIS_NAT_MAP: '10.0.0.5:6379=127.0.0.1:16379, [::1]:7000=redis-b.example:17000' }).redisNatMap, {
    '10.0.0.5:6379': { host: '127.0.0.1', port: 16379 },
    '[::1]:7000': { host: 'redis-b.example', port: 17000 },
  });
  t.throws(() => loadConfig({ HOROLOGIUM_REDIS_NAT_MAP: '10.0.0.5:6379' }), /"10.0.0.5:6379" is not announced-host:port=reachable-host:port/);
  t.equal(loadConfig({}).redisNatMap, undefined);
});
