import t from 'tap';
import { queuePageReply, type QueueReplyEntry, type QueueReplyPage } from '../../src/wire/queue-reply.js';

function entry(queueSeq: number, resultJson: string, more: Partial<QueueReplyEntry> = {}): QueueReplyEntry {
  return {
    queueSeq,
    callId: `call-${queueSeq}`,
    name: 'grep',
    argsJson: '{"q":"x"}',
    result: Buffer.from(resultJson),
    executionTimeJson: '0.012',
    isError: false,
    receivedAt: '2026-12-07T10:00:00.000Z',
    ...more,
  };
}

/** The reply as section 4 gives it, built as JSON text from strings: the oracle. */
function expected(page: QueueReplyPage): string {
  const entries = page.entries.map((e) => {
    const text = e.result.toString();
    const callId = JSON.stringify(e.callId);
    return (
      `{"queue_seq":${e.queueSeq},"call_id":${callId},"name":${JSON.stringify(e.name)},"args":${e.argsJson ?? 'null'},"result":${text},` +
      `"execution_time":${e.executionTimeJson},"is_error":${e.isError},"received_at":"${e.receivedAt}",` +
      `"message":{"role":"tool","tool_call_id":${callId},"content":${JSON.stringify(text)}}}`
    );
  });
  return `{"session":${JSON.stringify(page.session)},"committed":${page.committed},"head":${page.head},"oldest":${page.oldest},"entries":[${entries.join(',')}]}`;
}

t.test('an empty page', async (t) => {
  const page = { session: 's1', committed: 2, head: 2, oldest: 0, entries: [] };
  t.equal(queuePageReply(page).toString(), '{"session":"s1","committed":2,"head":2,"oldest":0,"entries":[]}');
});

t.test('entries keep their result byte for byte and carry its text as message.content', async (t) => {
  const lossless = '{"content":"line\\n\\"q\\"\\ttab é😀","big":12345678901234567890123,"2":1,"1":1.50,"e":1e3,"s":"\\ud800"}';
  const page: QueueReplyPage = {
    session: 'sé"s',
    committed: 1,
    head: 4,
    oldest: 1,
    entries: [
      entry(2, lossless),
      entry(3, '"a string result with \\u0000 and \u2028"', { callId: 'c"quoted"', name: 'nämé', argsJson: null, isError: true }),
      entry(4, '{"content":"' + 'x'.repeat(100_000) + '\\\\"}'),
    ],
  };
  const reply = queuePageReply(page);
  t.equal(reply.toString(), expected(page), 'the same bytes as the reply built from strings');
  const parsed = JSON.parse(reply.toString()) as { entries: Array<{ message: { content: string } }> };
  t.same(
    parsed.entries.map((e) => e.message.content),
    page.entries.map((e) => e.result.toString()),
    'message.content is the stored JSON text',
  );
  t.ok(reply.includes(Buffer.from(`"result":${lossless}`)), 'the result as stored, big integer and key order kept');
});
