import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { parseJson } from '../../src/json/lossless.js';
import { argumentTexts, withLongStringsTruncated } from '../../src/preview/arguments.js';
import { previewJson } from '../../src/preview/preview.js';
import { truncate } from '../../src/preview/truncate.js';

/** The project's copy of the preview vectors (docs/protocol.md section 2). */
const VECTORS = new URL('../fixtures/preview-vectors.jsonl', import.meta.url);
/** Where the team's shared conformance folder sits beside a working copy; absent in a plain clone. */
const SHARED_VECTORS = new URL('../../../shared/conformance/preview-vectors.jsonl', import.meta.url);
const passthroughTools = new Set(['read_file']);
const preview = (resultJson: string, name: string, limit = 4000, tools = passthroughTools) => {
  const doc = parseJson(resultJson);
  return previewJson(doc, doc.root, name, { limit, passthroughTools: tools });
};

t.test('every conformance vector', async (t) => {
  const lines = readFileSync(VECTORS, 'utf8').split('\n').filter((l) => l.trim() !== '');
  t.equal(lines.length, 23, `${lines.length} vectors`);
  for (const line of lines) {
    const v = JSON.parse(line) as { id: string; name: string; result_json: string; limit?: number; preview_json: string };
    t.equal(preview(v.result_json, v.name, v.limit ?? 4000), v.preview_json, v.id);
  }
});

const noShared = existsSync(SHARED_VECTORS) ? false : 'no ../shared/conformance/preview-vectors.jsonl beside this clone; only the fixture copy is checked';
t.test('the fixture is the shared conformance file, when that is beside the clone', { skip: noShared }, async (t) => {
  t.equal(readFileSync(VECTORS, 'utf8'), readFileSync(SHARED_VECTORS, 'utf8'), 'test/fixtures/preview-vectors.jsonl is up to date');
});

t.test('Ruby truthiness for content', async (t) => {
  t.equal(preview('{"content":""}', 'x'), '""');
  t.equal(preview('{"content":0}', 'x'), '"0"');
  t.equal(preview('{"content":[]}', 'x'), '"[]"');
  t.equal(preview('{"content":{}}', 'x'), '"{}"');
  t.equal(preview('{"content":false,"a":1}', 'x'), JSON.stringify('{"content":false,"a":1}'));
  t.equal(preview('{"content":null}', 'x'), JSON.stringify('{"content":null}'));
  t.equal(preview('{"content":true}', 'x'), '"true"');
  t.equal(preview('{"content":1.50}', 'x'), '"1.50"', 'number text as sent');
  t.equal(preview('{"content":"a","content":"b"}', 'x'), '"b"', 'the last duplicate wins, as in Ruby');
});

t.test('JSON text keeps order, numbers and escapes', async (t) => {
  t.equal(
    preview('{ "b": 1e3, "2": 12345678901234567890123, "1": [1.50, -0.0], "s": "\\u00e9\\/\\u001F" }', 'x'),
    JSON.stringify('{"b":1e3,"2":12345678901234567890123,"1":[1.50,-0.0],"s":"é/\\u001f"}'),
  );
  t.equal(preview('[1,"two",null]', 'x'), JSON.stringify('[1,"two",null]'));
  t.equal(preview('"\\ud800x"', 'x'), JSON.stringify('\ufffdx'), 'lone surrogate becomes U+FFFD');
  t.equal(preview('"\\ud83d\\ude00"', 'x'), '"😀"', 'an escaped pair is one character');
});

t.test('pass-through is configurable and case-sensitive', async (t) => {
  t.equal(preview('{"path":"a","n":1.0}', 'read_file'), '{"path":"a","n":1.0}');
  t.equal(preview('{"path":"a","content":"c"}', 'Read_File'), '"c"');
  t.equal(preview('{"content":"c"}', 'cat', 4000, new Set(['cat'])), '{"content":"c"}');
  t.equal(preview('"abcdefgh"', 'read_file', 5), '"ab..."', 'non-objects are truncated even for read_file');
});

t.test('truncate counts code points', async (t) => {
  t.equal(truncate('abcd', 4), 'abcd');
  t.equal(truncate('abcde', 4), 'a...');
  t.equal(truncate('😀😀😀😀', 4), '😀😀😀😀', 'four astral characters fit a limit of 4');
  t.equal(truncate('😀😀😀😀😀', 4), '😀...');
  t.equal(truncate('a😀b😀c', 5), 'a😀b😀c');
  t.equal(truncate('a😀b😀cd', 5), 'a😀...');
  const long = '😀'.repeat(5000);
  const cut = truncate(long, 4000);
  t.equal([...cut].length, 4000);
  t.ok(cut.isWellFormed(), 'no half surrogate');
  t.throws(() => truncate('abc', 3), RangeError);
  for (let limit = 4; limit < 12; limit++) {
    for (const text of ['', 'x'.repeat(limit), 'x'.repeat(limit + 1), '😀'.repeat(limit + 2), `a${'😀'.repeat(limit)}`]) {
      const out = truncate(text, limit);
      const points = [...text].length;
      t.equal([...out].length, Math.min(points, limit), `limit ${limit}, ${points} code points`);
      if (points > limit) t.equal(out, [...text].slice(0, limit - 3).join('') + '...');
    }
  }
});

t.test('args echo and arguments', async (t) => {
  const doc = parseJson(`{"args":{"q":"${'x'.repeat(300)}","n":12345678901234567890,"k":["${'y'.repeat(10)}"]}}`);
  const args = (doc.root as any).values[0];
  const texts = argumentTexts(doc, args, 20);
  t.equal([...JSON.parse(texts.echo)].length, 120, 'echo is 120 characters');
  t.equal(texts.arguments, `{"q":"${'x'.repeat(17)}...","n":12345678901234567890,"k":["${'y'.repeat(10)}"]}`);
  t.same(argumentTexts(doc, undefined, 20), { echo: '""', arguments: 'null' });
  const deep = parseJson('['.repeat(12_000) + `"${'z'.repeat(50)}"` + ']'.repeat(12_000));
  t.equal(withLongStringsTruncated(deep, deep.root, 10), '['.repeat(12_000) + '"zzzzzzz..."' + ']'.repeat(12_000));
});

t.test('a whole string preview is its canonical text, the same as escaping it again', async (t) => {
  // previewJson slices a string that stays whole instead of escaping it: the two must never differ.
  const pieces = ['a', 'é', '😀', '\\"', '\\\\', '\\/', '\\n', '\\u0000', '\\u001f', '\\u007f', '\\u00e9', '\\u2028', '\\ud800', '\\udc00x', '\\ud83d\\ude00', '\u2028', '\u007f', ' ', '\\t', '\\b'];
  let seed = 7;
  const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const differing: string[] = [];
  let compared = 0;
  for (let k = 0; k < 500; k++) {
    let raw = '';
    const n = Math.floor(next() * 30);
    for (let j = 0; j < n; j++) raw += pieces[Math.floor(next() * pieces.length)] as string;
    for (const text of [`{"content":"${raw}"}`, `"${raw}"`]) {
      const doc = parseJson(text);
      const root = doc.root as any;
      const node = root.kind === 'object' ? root.values[0] : root;
      for (const limit of [4, 10, 4000]) {
        compared++;
        // Collected, not asserted one by one: TAP output would break on a raw U+2028 in a message.
        if (previewJson(doc, doc.root, 'x', { limit, passthroughTools }) !== JSON.stringify(truncate(node.value, limit))) differing.push(`${JSON.stringify(text)} at ${limit}`);
      }
    }
  }
  t.equal(compared, 3000);
  t.same(differing, [], 'no string differs');
});
