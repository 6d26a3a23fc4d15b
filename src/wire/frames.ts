/**
 * Every message text the stream sends (docs/protocol.md, "Stream"). In this codebase a **frame** is
 * the JSON text of one stream message (`{"method":…,"result":…}`), whatever carries it: a
 * WebSocket text message, an SSE `data:` line, or an element of the HTTP replay's `events`. The
 * bytes a transport puts on the wire for a frame are its *encoding* (hub/transport.ts).
 *
 * Status frames are built by string concatenation from JSON texts that are already canonical, so
 * numbers and key order in event data survive and each frame is built once, whoever receives it.
 */

import type { FrameErrorCode } from '../errors.js';

/** What a status event is before its seq is known (a backend assigns the seq inside its commit). */
export interface StatusEventParts {
  type: string;
  /** The event's data as canonical JSON text. */
  dataJson: string;
  /** Seconds since the epoch, set when the server accepted the event. */
  timestamp: number;
  uuid: string;
  session: string;
}

/**
 * The status frame's text up to its seq. A backend that learns the seq only inside its atomic step
 * (Redis runs Lua) stores this head and the seq side by side, and `statusFrame` joins them.
 */
export function statusFrameHead(e: StatusEventParts): string {
  return (
    `{"method":"status","result":{"type":${JSON.stringify(e.type)},"data":${e.dataJson},` +
    `"timestamp":${e.timestamp},"uuid":${JSON.stringify(e.uuid)},"session":${JSON.stringify(e.session)},"seq":`
  );
}

/** The HorologiumAeternum status framing with `session` and `seq` added. */
export function statusFrame(head: string, seq: number): string {
  return `${head}${seq}}}`;
}

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
