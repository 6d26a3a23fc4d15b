/**
 * The published JSON Schemas (schemas/*.json, also in /openapi.json) and the server agree at every
 * boundary: each case below is validated with ajv (JSON Schema 2020-12) and sent to a real server,
 * and the schema refuses it exactly when the server answers 400. Lengths count characters (code
 * points) on both sides; query numbers are digit strings matched by one shared pattern.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import { startServer } from '../helpers/server.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });
const schema = (name: string) => ajv.compile(JSON.parse(readFileSync(new URL(`../../schemas/${name}.json`, import.meta.url), 'utf8')));

const MAX = Number.MAX_SAFE_INTEGER;
const strings = {
  empty: '',
  one: 'a',
  max: 'x'.repeat(256),
  over: 'x'.repeat(257),
  astralMax: '😀'.repeat(256),
  astralOver: '😀'.repeat(257),
  nul: 'a\u0000b',
  del: 'a\u007f',
  c1: 'a\u0085',
  tab: 'a\tb',
  nonAscii: 'résumé-ツール',
};

/** One field of `base` replaced by each value (undefined: the field left out). */
function variants(base: Record<string, unknown>, field: string, values: unknown[]): Array<Record<string, unknown>> {
  return values.map((v) => {
    const body = { ...base };
    if (v === undefined) delete body[field];
    else body[field] = v;
    return body;
  });
}

const bodyCases: Array<{ schema: string; path: string; bodies: Array<Record<string, unknown>> }> = [
  {
    schema: 'tool-call-body',
    path: 'tool-calls',
    bodies: [
      ...variants({ name: 'read_file', args: {} }, 'call_id', [...Object.values(strings), 5, null, true, undefined]),
      ...variants({ call_id: 'c', args: {} }, 'name', [...Object.values(strings), 3, null, undefined]),
    ],
  },
  {
    schema: 'tool-result-body',
    path: 'tool-results',
    bodies: [
      ...variants({ name: 'n', result: 1 }, 'call_id', [strings.empty, strings.max, strings.over, strings.astralMax, strings.astralOver, strings.nul, strings.c1, 7]),
      ...variants({ call_id: 'c', name: 'n', result: 1 }, 'execution_time', [-1, -0.0001, 0, 1.5, 1e9, null, 'x', true, undefined]),
      ...variants({ call_id: 'c', name: 'n', result: 1 }, 'is_error', [true, false, 'yes', 0, null, undefined]),
      ...variants({ call_id: 'c', name: 'n' }, 'result', [undefined, null, 0, 'text', { content: 'x' }, []]),
    ],
  },
  {
    schema: 'event-body',
    path: 'events',
    bodies: [
      ...variants({ data: {} }, 'type', ['a', 'a'.repeat(64), 'a'.repeat(65), 'a_b9', 'A', '1a', '_a', 'a-b', 'a b', '', 'tool_starting', 'tool_completed', 'tool_other', 5, undefined]),
      ...variants({ type: 'note' }, 'data', [{}, { k: 1 }, [], 'x', 1, null, undefined]),
    ],
  },
  {
    schema: 'ack-body',
    path: 'queue/ack',
    bodies: variants({}, 'through', [0, 1, 1.5, -1, MAX, MAX + 1, '1', null, true, undefined]),
  },
];

t.test('request bodies: the schema refuses exactly what the server answers 400', async (t) => {
  const srv = await startServer(t, { rateLimit: 0 });
  let n = 0;
  for (const { schema: name, path, bodies } of bodyCases) {
    const valid = schema(name);
    for (const body of bodies) {
      // A fresh session per case: a call_id used before would be a 409, which no schema can know.
      const reply = await srv.post(`/v1/sessions/b${n++}/${path}`, body);
      const schemaSays = valid(body);
      t.equal(reply.status === 400, !schemaSays, `${name} ${JSON.stringify(body).slice(0, 90)}: schema ${schemaSays ? 'accepts' : 'refuses'}, server ${reply.status}${reply.status === 400 ? ` ${reply.json.error.code}` : ''}`);
      if (reply.status === 400) t.notMatch(reply.json.error.message, /Invalid input|expected \w+, received|Too (small|big)|nonoptional/, 'a message for people');
    }
  }
});

const numberStrings = ['0', '1', '9', '10', '99', '100', '499', '500', '501', '999', '1000', '1001', '0000', '0001', '00001', '01000', String(MAX), String(MAX + 1), `0${MAX}`, '', 'abc', '1.0', '-1', '+1', ' 1', '1e3', '0x10'];
const waits = ['0', '0.5', '1', '59.999999', '60', '60.0', '60.000001', '60.1', '61', '0.0000001', '5.', '.5', '-1', 'abc', '600'];

const queryCases: Array<{ schema: string; url: (q: string) => string; params: Record<string, string[]> }> = [
  { schema: 'queue-query', url: (q) => `/v1/sessions/qq/queue?${q}`, params: { after: numberStrings, limit: numberStrings, wait: waits } },
  { schema: 'events-query', url: (q) => `/v1/sessions/qq/events?${q}`, params: { after: numberStrings, limit: numberStrings } },
  { schema: 'sessions-query', url: (q) => `/v1/sessions?${q}`, params: { limit: numberStrings, prefix: ['', 'a', 'p'.repeat(128), 'p'.repeat(129)] } },
];

t.test('query strings: the schema refuses exactly what the server answers 400', async (t) => {
  const srv = await startServer(t, { rateLimit: 0 });
  // One entry after seq 0, so that a valid long-poll returns at once.
  await srv.post('/v1/sessions/qq/tool-results', { call_id: 'c', name: 'n', result: 1 });
  for (const { schema: name, url, params } of queryCases) {
    const valid = schema(name);
    for (const [param, values] of Object.entries(params)) {
      for (const value of values) {
        const reply = await srv.get(url(`${param}=${encodeURIComponent(value)}`));
        const schemaSays = valid({ [param]: value });
        t.equal(reply.status === 400, !schemaSays, `${name} ${param}=${JSON.stringify(value)}: schema ${schemaSays ? 'accepts' : 'refuses'}, server ${reply.status}`);
      }
    }
  }
});

t.test('SSE query: since and epoch', async (t) => {
  const srv = await startServer(t, { rateLimit: 0 });
  const valid = schema('sse-query');
  for (const [param, values] of Object.entries({ since: numberStrings, epoch: ['', 'e', 'e'.repeat(256), 'e'.repeat(257)] })) {
    for (const value of values) {
      const controller = new AbortController();
      const reply = await fetch(`${srv.url}/v1/sessions/sq/sse?${param}=${encodeURIComponent(value)}`, { signal: controller.signal });
      controller.abort();
      const schemaSays = valid({ [param]: value });
      t.equal(reply.status === 400, !schemaSays, `sse-query ${param}=${JSON.stringify(value).slice(0, 40)}: schema ${schemaSays ? 'accepts' : 'refuses'}, server ${reply.status}`);
    }
  }
});
