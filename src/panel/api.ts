/**
 * The HTTP API as the panel uses it: relative URLs (so the panel works under a proxy's path prefix),
 * the bearer token when one is stored, and the error envelope turned into an ApiError.
 */
import type { SessionSummaryJson } from '../wire/sessions.js';
import { storedToken } from './token.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface SessionsPage {
  sessions: SessionSummaryJson[];
  next: string | null;
}

/** Sends a request with the stored token; a reply that is not 2xx becomes an ApiError from its envelope. */
async function send(path: string, method: 'GET' | 'DELETE' = 'GET'): Promise<{ res: Response; text: string }> {
  const token = storedToken();
  let res: Response;
  try {
    res = await fetch(path, { method, headers: token ? { authorization: `Bearer ${token}` } : {}, cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The server cannot be reached.');
  }
  const text = await res.text();
  if (res.ok) return { res, text };
  let body: { error?: { code?: string; message?: string } } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  throw new ApiError(res.status, body?.error?.code ?? 'HTTP_' + res.status, body?.error?.message ?? `The server replied ${res.status}.`);
}

async function getJson<T>(path: string, method: 'GET' | 'DELETE' = 'GET'): Promise<T> {
  const { text } = await send(path, method);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export function listSessions(options: { cursor?: string | null; prefix?: string; limit?: number }): Promise<SessionsPage> {
  const query = new URLSearchParams({ limit: String(options.limit ?? 100) });
  if (options.cursor) query.set('cursor', options.cursor);
  if (options.prefix) query.set('prefix', options.prefix);
  return getJson<SessionsPage>(`v1/sessions?${query}`);
}

/** One session's summary: its heads, its model queue's head and committed cursor. */
export function sessionSummary(session: string): Promise<SessionSummaryJson> {
  return getJson<SessionSummaryJson>(`v1/sessions/${encodeURIComponent(session)}`);
}

/** One completed call's complete result as the server stores it: its JSON text (scope consume). */
export async function toolResultText(session: string, callId: string): Promise<string> {
  return (await send(`v1/sessions/${encodeURIComponent(session)}/tool-results/${encodeURIComponent(callId)}`)).text;
}

/** Deletes a session (scope admin): its events, model queue and call records. */
export function deleteSession(session: string): Promise<unknown> {
  return getJson<unknown>(`v1/sessions/${encodeURIComponent(session)}`, 'DELETE');
}

/** The stream's URL beside the page: ws: for http:, wss: for https:. */
export function streamUrl(): string {
  const url = new URL('v1/stream', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
