/**
 * The active OpenTelemetry trace context as W3C headers (`traceparent`, `tracestate`), when the
 * application uses OpenTelemetry: `@opentelemetry/api` is an optional peer of the SDK, loaded on
 * the first request; without it, or without a registered propagator, nothing is added. The server
 * makes each tool execution's span a child of the span that was active when the call was posted.
 */
type OtelApi = typeof import('@opentelemetry/api');

let loading: Promise<OtelApi | undefined> | undefined;

/** Adds the active context's headers to `headers` (a no-op when OpenTelemetry is absent). */
export async function injectTraceContext(headers: Record<string, string>): Promise<void> {
  // The specifier in a variable: a bundler leaves the optional module alone, and its absence is a
  // rejected import (kept as "absent"), never a build error.
  const name = '@opentelemetry/api';
  loading ??= (import(name) as Promise<OtelApi>).then(
    (api) => api,
    () => undefined,
  );
  const api = await loading;
  api?.propagation.inject(api.context.active(), headers);
}
