/**
 * Full-jitter exponential backoff (each delay random in [0, min(max, initial * 2^(attempt-1))]),
 * shared by the stream client's reconnects and the producer's retries so that many clients that
 * lost the same server do not come back in step.
 */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export function fullJitterDelay(backoff: Backoff, attempt: number): number {
  return Math.round(Math.random() * Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, attempt - 1)));
}
