import t from 'tap';
import { jsonText, member, parseJson, type JsonObject } from '../../src/json/lossless.js';
import { decodeUtf8 } from '../../src/json/utf8.js';

t.test('canonical text keeps what JSON.parse loses', async (t) => {
  const doc = parseJson(' {\n "b" : 1.50 ,\t"2": [ 1e3 , 12345678901234567890123, -0 ], "1" : "\\u0041\\/\\n" , "z": { } , "__proto__": {"x": true} } ');
  t.equal(doc.text, '{"b":1.50,"2":[1e3,12345678901234567890123,-0],"1":"A/\\n","z":{},"__proto__":{"x":true}}');
  const root = doc.root as JsonObject;
  t.same(root.keys, ['b', '2', '1', 'z', '__proto__'], 'integer-like keys keep their place');
  t.equal(jsonText(doc, member(root, '2')!), '[1e3,12345678901234567890123,-0]');
  t.equal(jsonText(doc, member(root, '__proto__')!), '{"x":true}');
});

t.test('minified input without escapes is returned as is', async (t) => {
  const raw = '{"a":[1,2,{"b":"c"}],"d":"é😀"}';
  t.equal(parseJson(raw).text, raw);
});

t.test('strings are re-escaped as JSON.stringify escapes them', async (t) => {
  const doc = parseJson('["\\u00e9", "\\u001F", "\\u2028", "\\"\\\\", "\\ud800", "\\udc00\\ud83d\\ude00", "\\b\\f\\r\\t"]');
  t.equal(doc.text, JSON.stringify(['é', '\u001f', '\u2028', '"\\', '\ufffd', '\ufffd😀', '\b\f\r\t']));
});

t.test('keys are safe-encoded too', async (t) => {
  const doc = parseJson('{"\\ud800":1}');
  t.equal(doc.text, '{"\ufffd":1}');
  t.same((doc.root as JsonObject).keys, ['\ufffd']);
});

t.test('invalid UTF-8 becomes U+FFFD per maximal subpart', async (t) => {
  const bytes = Buffer.concat([Buffer.from('"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('b'), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from('c'), Buffer.from([0xc0, 0xaf]), Buffer.from('"')]);
  t.equal(parseJson(decodeUtf8(bytes)).text, JSON.stringify('a\ufffd\ufffd\ufffdb\ufffdc\ufffd\ufffd'));
});

t.test('10,000 levels parse; deeper than the limit is a nesting error', async (t) => {
  const deep = '['.repeat(10_000) + '1' + ']'.repeat(10_000);
  t.equal(parseJson(deep).text, deep);
  const objects = '{"a":'.repeat(10_000) + 'null' + '}'.repeat(10_000);
  t.equal(parseJson(objects).text, objects);
  t.throws(() => parseJson('['.repeat(100_000) + ']'.repeat(100_000)), { name: 'JsonNestingError' });
});

t.test('invalid JSON is a syntax error, never a crash', async (t) => {
  for (const bad of ['', ' ', '{', '}', '[1,]', '{"a":1,}', '01', '1.', '.5', '+1', '1e', '"\u0001"', '{"a":1}x', 'tru', 'nul', '"\\x"', '"\\u12"', '[1 2]', '{"a" 1}', '{a:1}', "'a'", 'NaN', 'Infinity', '"abc', '[', '{"a":', '\u00a0 1']) {
    t.throws(() => parseJson(bad), { name: 'JsonSyntaxError' }, JSON.stringify(bad));
  }
});

t.test('agrees with JSON.parse on values', async (t) => {
  const samples = ['{"a":[1,{"b":null}],"c":"d\\"e"}', '[true,false,null,0,-1.5e-3,"\\u0000"]', '"x"', '42', '[]', '{}', '[[[[[]]]]]'];
  for (const s of samples) t.same(JSON.parse(parseJson(s).text), JSON.parse(s), s);
});

t.test('a string fault is reported where it is', async (t) => {
  const cases: Array<[string, string]> = [
    ['"ab\u0001c"', 'control character in string at position 3'],
    ['"a\\n\u0002"', 'control character in string at position 4'],
    ['{"k\\n":"v\u001f"}', 'control character in string at position 9'],
    ['"abc', 'unterminated string at position 4'],
    ['"a\\nb', 'unterminated string at position 5'],
    ['"a\\"', 'unterminated string at position 4'],
    ['"x\\"y\\', 'unterminated string at position 6'],
    ['"a\\x"', 'invalid escape in string at position 0'],
    ['"\\u12"', 'invalid escape in string at position 0'],
    ['["ok\\n", "bad\\q"]', 'invalid escape in string at position 9'],
  ];
  for (const [bad, message] of cases) t.throws(() => parseJson(bad), { name: 'JsonSyntaxError', message }, JSON.stringify(bad));
});

t.test('random strings with every kind of escape: the canonical text is what JSON.stringify writes', async (t) => {
  // Escapes JSON.stringify writes as they are, and ones it would write otherwise (\/, \u00e9,
  // upper-case hex, \u000a for \n, surrogates, lone or paired), and escaped backslashes before a `u`.
  const pieces = ['a', ' ', 'é', '😀', '\u2028', '\\"', '\\\\', '\\n', '\\t', '\\b', '\\f', '\\r', '\\u0000', '\\u001f', '\\u000b', '\\/', '\\u00e9', '\\u001F', '\\u000a', '\\u2028', '\\ud800', '\\udc00', '\\ud83d\\ude00', '\\\\u2028', '\\\\u0000', 'u00', '/'];
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const wrong: string[] = [];
  for (let k = 0; k < 3000; k++) {
    const raw = `"${Array.from({ length: random(40) }, () => pieces[random(pieces.length)]).join('')}"`;
    const expected = JSON.stringify((JSON.parse(raw) as string).toWellFormed());
    if (parseJson(`[${raw},1]`).text !== `[${expected},1]`) wrong.push(raw);
  }
  t.same(wrong.slice(0, 5), [], `${wrong.length} of 3,000 differ`);
});

t.test('a long string with an escape every few characters', async (t) => {
  const text = 'const s = "quoted";\tindented\\path\n'.repeat(30_000);
  const doc = parseJson(`{"content":${JSON.stringify(text)},"n":12345678901234567890}`);
  t.equal(doc.text, `{"content":${JSON.stringify(text)},"n":12345678901234567890}`);
  t.equal(((doc.root as JsonObject).values[0] as { value: string }).value, text);
});
