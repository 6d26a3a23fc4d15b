/**
 * A real OTLP/HTTP trace receiver for tests: `POST /v1/traces` in protobuf (decoded by
 * OpenTelemetry's own generated protobufjs code, from @opentelemetry/otlp-transformer 0.216, the
 * last release that ships it; installed under the alias otlp-transformer-protobufjs) or in JSON,
 * answered as a collector answers. Every span received is kept, flattened: ids in hex, times in
 * nanoseconds as bigint, attributes as plain values.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { Test } from 'tap';
import { until } from './wait.js';

const require = createRequire(import.meta.url);
const { opentelemetry } = require('otlp-transformer-protobufjs/build/src/generated/root.js');
const ExportTraceServiceRequest = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportTraceServiceResponse = opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  /** OTLP's enum: 1 INTERNAL, 2 SERVER, 3 CLIENT, … */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, string | number | boolean>;
  /** The request's content type: application/x-protobuf or application/json. */
  encoding: string;
}

export interface OtlpReceiver {
  /** The endpoint to give OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Waits until `count` spans have arrived (or throws after `ms`). */
  received(count: number, ms?: number): Promise<ReceivedSpan[]>;
}

const hex = (value: unknown): string => {
  if (value === undefined || value === null || value === '') return '';
  // protobuf bytes arrive as base64 through toObject; OTLP/JSON sends them as hex already.
  return typeof value === 'string' && /^[0-9a-f]*$/.test(value) && value.length % 2 === 0 && value.length >= 16 ? value : Buffer.from(value as string, 'base64').toString('hex');
};

function anyValue(v: any): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  return JSON.stringify(v);
}

const attributesOf = (list: any[] | undefined): Record<string, string | number | boolean> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value ?? {})]));

function flatten(request: any, encoding: string): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          name: s.name,
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          kind: Number(s.kind ?? 0),
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: attributesOf(s.attributes),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' },
          resource,
          encoding,
        });
      }
    }
  }
  return spans;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startOtlpReceiver(t: Test): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer(async (req, res) => {
    const bytes = await body(req);
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0] as string;
    if (type === 'application/x-protobuf') {
      const decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(bytes), { longs: String, bytes: String, enums: Number, defaults: false });
      spans.push(...flatten(decoded, type));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(ExportTraceServiceResponse.encode({}).finish());
    } else if (type === 'application/json') {
      spans.push(...flatten(JSON.parse(bytes.toString('utf8')), type));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      res.writeHead(415).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    async received(count, ms = 10_000) {
      await until(() => spans.length >= count, `${count} spans at the OTLP receiver (have ${spans.length})`, ms);
      return spans;
    },
  };
}
