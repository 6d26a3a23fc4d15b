import t from 'tap';
import { jsonStringLength, writeJsonString } from '../../src/json/string-bytes.js';

/** The JSON string literal of `text` built from its UTF-8 bytes, as the queue reply builds it. */
function fromBytes(text: string): Buffer {
  const bytes = Buffer.from(text);
  const out = Buffer.alloc(jsonStringLength(bytes));
  const end = writeJsonString(bytes, out, 0);
  if (end !== out.length) throw new Error(`wrote ${end} bytes, told ${out.length}`);
  return out;
}

function check(t: { ok: (value: unknown, message: string) => void }, text: string, what: string): void {
  t.ok(fromBytes(text).equals(Buffer.from(JSON.stringify(text))), what);
}

t.test('every character below U+0080 is escaped as JSON.stringify escapes it', async (t) => {
  for (let c = 0; c < 0x80; c++) check(t, String.fromCharCode(c), `U+${c.toString(16).padStart(4, '0')}`);
  check(t, Array.from({ length: 0x80 }, (_, c) => String.fromCharCode(c)).join(''), 'all of them in one text');
});

t.test('multi-byte characters pass through unchanged', async (t) => {
  // Named by code points: a raw U+2028 in a test's name would break the TAP stream's lines.
  const codePoints = (text: string) => [...text].map((c) => `U+${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`).join(' ');
  for (const text of ['é', '\u2028\u2029', '😀', '\uffff', '\u{10ffff}', 'a"é\\😀\n\u0001']) check(t, text, codePoints(text));
});

t.test('escaped sequences in the text are text: their backslash is escaped', async (t) => {
  check(t, '{"s":"\\ud800\\u0000\\n","n":12345678901234567890123}', 'a lossless result with escapes');
});

t.test('long runs and short runs around escapes, at every boundary', async (t) => {
  for (const run of [0, 1, 63, 64, 65, 200]) {
    const plain = 'x'.repeat(run);
    check(t, `${plain}"${plain}\\${plain}\t${plain}`, `runs of ${run}`);
  }
});

t.test('random texts of every kind of character', async (t) => {
  const alphabet = ['a', ' ', '"', '\\', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', '€', '😀', '\u2028', '/', '<'];
  let seed = 12345;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  let ok = true;
  for (let k = 0; k < 2000; k++) {
    const text = Array.from({ length: random(300) }, () => alphabet[random(alphabet.length)]).join('');
    if (!fromBytes(text).equals(Buffer.from(JSON.stringify(text)))) ok = false;
  }
  t.ok(ok, '2,000 random texts: the same bytes as JSON.stringify');
});

t.test('writes at an offset into a larger buffer', async (t) => {
  const out = Buffer.alloc(20, 0x2d);
  const end = writeJsonString(Buffer.from('a"b'), out, 3);
  t.equal(end, 3 + 6);
  t.equal(out.toString(), '---"a\\"b"-----------');
});
