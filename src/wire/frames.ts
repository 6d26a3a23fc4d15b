/**
 * Every message text the stream sends (docs/protocol.md, "Stream"). In this codebase a **frame** is
 * the JSON text of one stream message (`{"method":…,"result":…}`), whatever carries it: a
 * WebSocket text message, an SSE `data:` line, or an element of the HTTP replay's `events`. The
 * bytes a transport puts on the wire for a frame are its *encoding* (stream/transport.ts).
 *
 * The status frames of stored events are built by the event composer (wire/event-composer.ts);
 * this file builds the stream's control frames.
 */

import type { FrameErrorCode } from '../common/errors.js';

export interface SubscribedResult {
  session: string;
  epoch: string;
  head: number;
  oldest: number;
  recovered: boolean;
}

export function subscribedFrame(result: SubscribedResult): string {
  const { session, epoch, head, oldest, recovered } = result;
  return JSON.stringify({ method: 'subscribed', result: { session, epoch, head, oldest, recovered } });
}

/** Why a subscription ended when the client did not ask for it. */
export type UnsubscribedReason = 'deleted' | 'forbidden' | 'reset';

export function unsubscribedFrame(session: string, reason?: UnsubscribedReason): string {
  return JSON.stringify({ method: 'unsubscribed', result: reason === undefined ? { session } : { session, reason } });
}

/** An error frame; `session` names the session it is about, when it is about one. */
export function errorFrame(code: FrameErrorCode, message: string, session?: string): string {
  return JSON.stringify({ method: 'error', result: session === undefined ? { code, message } : { code, message, session } });
}

export function refreshedFrame(exp: number | null): string {
  return JSON.stringify({ method: 'refreshed', result: { exp } });
}

/** A change of a watched session (section 9): its summary, or `{session, deleted: true}`. */
export function sessionFrame(result: object): string {
  return JSON.stringify({ method: 'session', result });
}

/** The heartbeat text message, both ways. */
export const HEARTBEAT = '💓';
