/**
 * Timed requests for the fault tests (test/integration/redis-*partition.test.ts): a tool result
 * posted with a deadline far past the server's, and what came back how fast.
 */
import type { Running } from './server.js';

/** A result with what JSON.parse would lose, to check byte for byte. */
export const resultText = (id: string): string => `{"id":"${id}","big":123456789012345678901234567890,"f":1.0}`;

export interface Answer {
  id: string;
  status: number;
  ms: number;
  retryAfter: string | null;
  /** ms since `origin` (the fault's start; negative before it). */
  at: number;
}

/** Posts one tool result of `id` to `session` and times it; status 0 when no answer came in 20 s. */
export async function timedPost(srv: Running, session: string, id: string, origin: number): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`${srv.url}/v1/sessions/${session}/tool-results`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"call_id":"${id}","name":"grep","result":${resultText(id)}}`,
    signal: AbortSignal.timeout(20_000),
  }).catch(() => undefined);
  if (res) await res.arrayBuffer();
  return { id, status: res?.status ?? 0, ms: Date.now() - started, retryAfter: res?.headers.get('retry-after') ?? null, at: started - origin };
}
