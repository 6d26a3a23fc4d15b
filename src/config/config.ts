/**
 * Every setting of docs/protocol.md section 8, in one zod schema, parsed once at boot. An invalid value
 * stops start-up with a message naming the variable and what it accepts.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { AuthSettings } from '../auth/authenticator.js';
import { jwtPublicKey } from '../auth/keys.js';
import { staticToken, type StaticToken } from '../auth/principal.js';
import { isLoopback } from '../auth/loopback.js';
import { parseDuration } from '../common/duration.js';

const integer = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, `${name} must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`));

const duration = (name: string) =>
  z.string().transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms !== undefined) return ms;
    ctx.addIssue({ code: 'custom', message: `${name} must be 0 or a non-negative number followed by ms, s, m, h or d (such as 24h or 1.5d)` });
    return z.NEVER;
  });

/** HOROLOGIUM_REDIS_NAT_MAP: `announced=reachable` pairs of host:port, comma-separated. */
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/;
const natMap = z.string().transform((text, ctx) => {
  const map: Record<string, { host: string; port: number }> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const [announced, reachable] = pair.split('=');
    const to = HOST_PORT.exec(reachable ?? '');
    if (!announced || !HOST_PORT.test(announced) || !to || Number(to[2]) > 65535) {
      ctx.addIssue({ code: 'custom', message: `HOROLOGIUM_REDIS_NAT_MAP: "${pair}" is not announced-host:port=reachable-host:port` });
      return z.NEVER;
    }
    map[announced] = { host: (to[1] as string).replace(/^\[|\]$/g, ''), port: Number(to[2]) };
  }
  return map;
});

const list = z
  .string()
  .transform((s) => s.split(',').map((x) => x.trim()).filter((x) => x.length > 0));

const storeUrl = z
  .string()
  .refine((s) => /^sqlite:.+/.test(s) || s === 'memory:' || /^rediss?(\+cluster)?:\/\/.+/.test(s), {
    message: 'HOROLOGIUM_STORE must be sqlite:PATH, memory:, redis://… or redis+cluster://host:port,host:port,…',
  });

/** The value itself, or the content of the file `@path` names (undefined, with an issue, if unreadable). */
function atPath(value: string, ctx: z.RefinementCtx): string | undefined {
  if (!value.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `cannot read ${value.slice(1)}: ${(err as Error).message}` });
    return undefined;
  }
}

const tokens = z.string().transform((value, ctx): StaticToken[] => {
  const text = atPath(value, ctx);
  if (text === undefined) return z.NEVER;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {"token","scopes","sessions"} or @path' });
    return z.NEVER;
  }
  const result = z.array(staticToken).safeParse(parsed);
  if (!result.success) {
    ctx.addIssue({ code: 'custom', message: `must be a JSON array of {"token","scopes","sessions"}: ${z.prettifyError(result.error)}` });
    return z.NEVER;
  }
  return result.data;
});

const pem = z.string().transform((value, ctx) => {
  // Inline PEMs may come with their newlines written as \n (one-line env files).
  const text = value.startsWith('@') ? atPath(value, ctx) : value.replace(/\\n/g, '\n');
  if (text === undefined) return z.NEVER;
  try {
    jwtPublicKey(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `HOROLOGIUM_JWT_PUBLIC_KEY must be a PEM public key: ${(err as Error).message}` });
    return z.NEVER;
  }
  return text;
});

/** OTEL_TRACES_EXPORTER: a comma-separated list (the OpenTelemetry variable's form); otlp and none are known here. */
const tracesExporter = z.string().transform((value, ctx) => {
  const names = value.split(',').map((x) => x.trim().toLowerCase()).filter((x) => x.length > 0);
  const unknown = names.filter((x) => x !== 'otlp' && x !== 'none');
  if (unknown.length === 0) return names.includes('otlp');
  ctx.addIssue({ code: 'custom', message: `OTEL_TRACES_EXPORTER: ${unknown.join(', ')} is not supported; use otlp (Jaeger, Tempo, Zipkin's collectors and the OpenTelemetry Collector take OTLP) or none` });
  return z.NEVER;
});

const otlpProtocol = (name: string) =>
  z.string().transform((value, ctx) => {
    if (value === 'http/protobuf' || value === 'http/json') return value;
    ctx.addIssue({ code: 'custom', message: `${name} must be http/protobuf or http/json (grpc is not supported: send OTLP over HTTP, port 4318 on a collector)` });
    return z.NEVER;
  });

/** An OpenTelemetry boolean: only "true", in any case, is true. */
const otelBoolean = z.string().transform((value) => value.trim().toLowerCase() === 'true');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The environment as read: every key optional, defaults applied here and nowhere else. */
export const environmentSchema = z.object({
  PORT: integer('PORT', 0, 65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  HOROLOGIUM_STORE: storeUrl.default('sqlite:./data/horologium.db'),
  HOROLOGIUM_TOKENS: tokens.optional(),
  HOROLOGIUM_JWT_SECRET: z.string().min(32, 'HOROLOGIUM_JWT_SECRET must be at least 32 characters').optional(),
  HOROLOGIUM_JWT_PUBLIC_KEY: pem.optional(),
  HOROLOGIUM_ALLOWED_ORIGINS: list.optional(),
  HOROLOGIUM_INSECURE: z.enum(['0', '1']).default('0').transform((v) => v === '1'),
  HOROLOGIUM_PREVIEW_LIMIT: integer('HOROLOGIUM_PREVIEW_LIMIT', 4, 1_000_000).default(4000),
  HOROLOGIUM_PASSTHROUGH_TOOLS: list.default(['read_file']),
  HOROLOGIUM_HISTORY_SIZE: integer('HOROLOGIUM_HISTORY_SIZE', 1, 1_000_000).default(1000),
  HOROLOGIUM_HEARTBEAT_MS: integer('HOROLOGIUM_HEARTBEAT_MS', 100, 3_600_000).default(20_000),
  HOROLOGIUM_MAX_BUFFERED_BYTES: integer('HOROLOGIUM_MAX_BUFFERED_BYTES', 1024, 2 ** 31).default(4_194_304),
  HOROLOGIUM_BODY_LIMIT: integer('HOROLOGIUM_BODY_LIMIT', 1024, 2 ** 30).default(16_777_216),
  HOROLOGIUM_MAX_SUBSCRIPTIONS: integer('HOROLOGIUM_MAX_SUBSCRIPTIONS', 1, 100_000).default(100),
  HOROLOGIUM_REDIS_WAIT_REPLICAS: integer('HOROLOGIUM_REDIS_WAIT_REPLICAS', 0, 16).default(0),
  HOROLOGIUM_REDIS_NAT_MAP: natMap.optional(),
  HOROLOGIUM_STORE_TIMEOUT: duration('HOROLOGIUM_STORE_TIMEOUT')
    .pipe(z.number().min(100, 'HOROLOGIUM_STORE_TIMEOUT must be at least 100ms').max(600_000, 'HOROLOGIUM_STORE_TIMEOUT must be at most 10m'))
    .default(2000),
  HOROLOGIUM_MAX_EVENT_BYTES: integer('HOROLOGIUM_MAX_EVENT_BYTES', 2, 2 ** 30).default(65_536),
  HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS: integer('HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS', 1, 1_000_000).default(1000),
  HOROLOGIUM_TRUST_PROXY: list.optional(),
  HOROLOGIUM_RATE_LIMIT: integer('HOROLOGIUM_RATE_LIMIT', 0, 10_000_000).default(1000),
  HOROLOGIUM_RETAIN_ACKED: duration('HOROLOGIUM_RETAIN_ACKED').default(86_400_000),
  HOROLOGIUM_SESSION_TTL: duration('HOROLOGIUM_SESSION_TTL').default(0),
  HOROLOGIUM_RETENTION_INTERVAL: duration('HOROLOGIUM_RETENTION_INTERVAL').optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  // Tracing (telemetry/tool-spans.ts) by OpenTelemetry's own variables; the SDK reads the rest
  // (endpoint, headers, service name, resource attributes, batch settings) itself.
  OTEL_SDK_DISABLED: otelBoolean.default(false),
  OTEL_TRACES_EXPORTER: tracesExporter.default(false),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol('OTEL_EXPORTER_OTLP_PROTOCOL').optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL').optional(),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: otelBoolean.default(false),
});

/** Tool executions as OpenTelemetry spans (telemetry/tool-spans.ts), when OTEL_TRACES_EXPORTER=otlp. */
export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf by default). */
  protocol: 'http/protobuf' | 'http/json';
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: the previews of arguments and result go on the span. */
  captureContent: boolean;
}

export interface Config {
  port: number;
  host: string;
  store: string;
  auth: AuthSettings;
  allowedOrigins?: string[];
  /** Where the built panel is (index.html, app.js, panel.css); by default dist/panel of this package. */
  panelDir?: string;
  insecure: boolean;
  previewLimit: number;
  passthroughTools: ReadonlySet<string>;
  historySize: number;
  heartbeatMs: number;
  maxBufferedBytes: number;
  bodyLimit: number;
  maxSubscriptions: number;
  /** redis: replicas each write must reach before its 202 (WAIT), so that a failover loses none. */
  redisWaitReplicas: number;
  /** Redis Cluster: the address to reach each node at, by the address the cluster announces (behind NAT). */
  redisNatMap?: Record<string, { host: string; port: number }>;
  /** Shared stores: how long a command may go unanswered before it fails (503) and its connection is made again (ms). */
  storeTimeoutMs: number;
  /** Largest `data` of a generic event, as UTF-8 JSON text (413 EVENT_TOO_LARGE above it). */
  maxEventBytes: number;
  /** Open WebSocket connections per client address (429 TOO_MANY_CONNECTIONS at the upgrade). */
  maxConnectionsPerAddress: number;
  /** Requests per second per token when auth is configured (429 RATE_LIMITED); 0 turns it off. */
  rateLimit: number;
  /** Acknowledged queue entries older than this (ms) are removed; 0 keeps them. */
  retainAckedMs: number;
  /** A session with no event for this long (ms) is deleted; 0 turns it off. */
  sessionTtlMs: number;
  /**
   * How often the retention sweep runs (ms); 0 turns the background sweep off. Unset: a quarter of
   * the shortest retention setting, from 250 ms to 60 s, so that a short TTL is honoured on time.
   */
  retentionIntervalMs: number;
  /** Proxies whose X-Forwarded-For gives the client address (addresses, CIDRs or proxy-addr names). */
  trustProxy: string[];
  logLevel: (typeof LOG_LEVELS)[number];
  /** `json` (one object per line, for a log pipeline) or `pretty` (pino-pretty, for a person; a dev dependency). */
  logFormat: 'json' | 'pretty';
  /** Tool executions as OpenTelemetry spans: on with OTEL_TRACES_EXPORTER=otlp (and not OTEL_SDK_DISABLED=true); absent when off. */
  tracing?: TracingSettings;
}

/** A quarter of the shortest retention setting that is on, from 250 ms to 60 s. */
export function defaultRetentionInterval(...settingsMs: number[]): number {
  const on = settingsMs.filter((ms) => ms > 0);
  return on.length === 0 ? 60_000 : Math.min(60_000, Math.max(250, Math.min(...on) / 4));
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads the configuration from `env` (process.env in production); throws ConfigError. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const known = Object.fromEntries(
    Object.keys(environmentSchema.shape)
      .filter((key) => env[key] !== undefined && env[key] !== '')
      .map((key) => [key, env[key]]),
  );
  const parsed = environmentSchema.safeParse(known);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const open = e.HOROLOGIUM_TOKENS === undefined && !e.HOROLOGIUM_JWT_SECRET && !e.HOROLOGIUM_JWT_PUBLIC_KEY;
  if (open && !isLoopback(e.HOST) && !e.HOROLOGIUM_INSECURE) {
    throw new ConfigError(
      `HOST=${e.HOST} is not a loopback address and no auth is configured (HOROLOGIUM_TOKENS, HOROLOGIUM_JWT_SECRET or HOROLOGIUM_JWT_PUBLIC_KEY); set one, or HOROLOGIUM_INSECURE=1 if an open server is intended`,
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    store: e.HOROLOGIUM_STORE,
    auth: {
      tokens: e.HOROLOGIUM_TOKENS ?? [],
      ...(e.HOROLOGIUM_JWT_SECRET ? { jwtSecret: e.HOROLOGIUM_JWT_SECRET } : {}),
      ...(e.HOROLOGIUM_JWT_PUBLIC_KEY ? { jwtPublicKey: e.HOROLOGIUM_JWT_PUBLIC_KEY } : {}),
      open,
    },
    ...(e.HOROLOGIUM_ALLOWED_ORIGINS ? { allowedOrigins: e.HOROLOGIUM_ALLOWED_ORIGINS } : {}),
    insecure: e.HOROLOGIUM_INSECURE,
    previewLimit: e.HOROLOGIUM_PREVIEW_LIMIT,
    passthroughTools: new Set(e.HOROLOGIUM_PASSTHROUGH_TOOLS),
    historySize: e.HOROLOGIUM_HISTORY_SIZE,
    heartbeatMs: e.HOROLOGIUM_HEARTBEAT_MS,
    maxBufferedBytes: e.HOROLOGIUM_MAX_BUFFERED_BYTES,
    bodyLimit: e.HOROLOGIUM_BODY_LIMIT,
    maxSubscriptions: e.HOROLOGIUM_MAX_SUBSCRIPTIONS,
    redisWaitReplicas: e.HOROLOGIUM_REDIS_WAIT_REPLICAS,
    storeTimeoutMs: e.HOROLOGIUM_STORE_TIMEOUT,
    ...(e.HOROLOGIUM_REDIS_NAT_MAP ? { redisNatMap: e.HOROLOGIUM_REDIS_NAT_MAP } : {}),
    maxEventBytes: e.HOROLOGIUM_MAX_EVENT_BYTES,
    maxConnectionsPerAddress: e.HOROLOGIUM_MAX_CONNECTIONS_PER_ADDRESS,
    rateLimit: e.HOROLOGIUM_RATE_LIMIT,
    retainAckedMs: e.HOROLOGIUM_RETAIN_ACKED,
    sessionTtlMs: e.HOROLOGIUM_SESSION_TTL,
    retentionIntervalMs: e.HOROLOGIUM_RETENTION_INTERVAL ?? defaultRetentionInterval(e.HOROLOGIUM_RETAIN_ACKED, e.HOROLOGIUM_SESSION_TTL),
    trustProxy: e.HOROLOGIUM_TRUST_PROXY ?? [],
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    ...(e.OTEL_TRACES_EXPORTER && !e.OTEL_SDK_DISABLED
      ? {
          tracing: {
            protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
            captureContent: e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
          },
        }
      : {}),
  };
}

/** Variables of the CLI's client commands (src/cli/connection.ts): known, but not the server's. */
const CLIENT_VARIABLES = ['HOROLOGIUM_CLIENT_URL', 'HOROLOGIUM_CLIENT_TOKEN'];

/** Edit distance, for "did you mean": small strings only. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length] as number;
}

/**
 * HOROLOGIUM_* variables that mean nothing to the server, each with the nearest real one: a typo
 * such as HOROLOGIUM_TOKEN for HOROLOGIUM_TOKENS would otherwise start the server without auth.
 */
export function unknownSettings(env: Record<string, string | undefined>): Array<{ variable: string; suggestion?: string }> {
  const known = Object.keys(environmentSchema.shape).filter((key) => key.startsWith('HOROLOGIUM_'));
  return Object.keys(env)
    .filter((key) => key.startsWith('HOROLOGIUM_') && !known.includes(key) && !CLIENT_VARIABLES.includes(key))
    .sort()
    .map((variable) => {
      const [nearest] = known.map((k) => ({ k, d: distance(variable, k) })).sort((x, y) => x.d - y.d);
      return nearest && nearest.d <= 4 ? { variable, suggestion: nearest.k } : { variable };
    });
}
