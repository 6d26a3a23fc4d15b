/**
 * The text frames of the stream (CONTRACT.md section 5), built by string concatenation from JSON
 * texts that are already canonical, so that numbers and key order in event data survive and each
 * frame is encoded once, whoever receives it.
 */

/** The HorologiumAeternum status framing with `session` and `seq` added. */
export function statusFrame(
  type: string,
  dataJson: string,
  timestamp: number,
  uuid: string,
  session: string,
  seq: number,
): string {
  const [before, after] = statusFrameAround(type, dataJson, timestamp, uuid, session);
  return before + seq + after;
}

/** The status frame's text before and after its seq, for a backend that assigns the seq atomically. */
export function statusFrameAround(type: string, dataJson: string, timestamp: number, uuid: string, session: string): [string, string] {
  return [
    `{"method":"status","result":{"type":${JSON.stringify(type)},"data":${dataJson},` +
      `"timestamp":${timestamp},"uuid":"${uuid}","session":${JSON.stringify(session)},"seq":`,
    '}}',
  ];
}

export function subscribedFrame(session: string, epoch: string, head: number, oldest: number, recovered: boolean): string {
  return JSON.stringify({ method: 'subscribed', result: { session, epoch, head, oldest, recovered } });
}

export function unsubscribedFrame(session: string): string {
  return JSON.stringify({ method: 'unsubscribed', result: { session } });
}

export function errorFrame(code: string, message: string): string {
  return JSON.stringify({ method: 'error', result: { code, message } });
}

export function refreshedFrame(exp: number | null): string {
  return JSON.stringify({ method: 'refreshed', result: { exp } });
}

/** The heartbeat text frame, both ways. */
export const HEARTBEAT = '💓';
