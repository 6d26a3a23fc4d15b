/**
 * The project's stream client (src/client) in Node with `ws`, recording every event and every
 * `subscribed` it is given, quick to reconnect (50 to 200 ms), closed at teardown.
 */
import type { Test } from 'tap';
import WebSocket from 'ws';
import { HorologiumClient, type StatusEvent, type SubscribedInfo } from '../../src/client/index.js';

export interface RecordingClient {
  client: HorologiumClient;
  events: StatusEvent[];
  subscribed: SubscribedInfo[];
}

/** A client of the stream at `url` (one or several: it moves on when one refuses). */
export function recordingClient(t: Test, url: string | string[]): RecordingClient {
  const events: StatusEvent[] = [];
  const subscribed: SubscribedInfo[] = [];
  const client = new HorologiumClient({
    url,
    WebSocket,
    onEvent: (e) => events.push(e),
    onSubscribed: (s) => subscribed.push(s),
    backoff: { initialMs: 50, maxMs: 200 },
  });
  t.teardown(() => client.close());
  return { client, events, subscribed };
}
