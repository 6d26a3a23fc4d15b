/** The prepared WebSocket frame of a live event: RFC 6455 framing, built once for all subscribers. */
import t from 'tap';
import { encodeTextMessage } from '../../src/stream/ws-transport.js';

t.test('final, text, unmasked, with the three length encodings', async (t) => {
  for (const [size, headerLength] of [[100, 2], [126, 4], [65_535, 4], [65_536, 10], [200_000, 10]] as const) {
    const payload = Buffer.alloc(size, 0x61);
    const frame = encodeTextMessage(payload);
    t.equal(frame[0], 0x81, `${size}: FIN + text opcode`);
    t.equal((frame[1] as number) & 0x80, 0, `${size}: not masked`);
    t.equal(frame.length, headerLength + size, `${size}: ${headerLength}-byte header`);
    const length = headerLength === 2 ? (frame[1] as number) & 0x7f : headerLength === 4 ? frame.readUInt16BE(2) : Number(frame.readBigUInt64BE(2));
    t.equal(length, size);
    t.ok(frame.subarray(headerLength).equals(payload), `${size}: the payload as is`);
  }
});
