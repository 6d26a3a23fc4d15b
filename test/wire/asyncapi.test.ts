/**
 * schemas/asyncapi.json, the AsyncAPI 3.0 document of the WebSocket stream: valid against AsyncAPI's
 * own 3.0.0 JSON Schema (@asyncapi/specs, with ajv), built from the same published schemas as the
 * rest (every payload is the schemas/ file of its message), and naming every method the stream
 * accepts and every frame it sends.
 */
import { readFileSync } from 'node:fs';
import specs from '@asyncapi/specs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import t from 'tap';
import { jsonSchemas } from '../../src/wire/openapi.js';

const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
const doc = JSON.parse(readFileSync(new URL('../../schemas/asyncapi.json', import.meta.url), 'utf8'));

t.test("valid against AsyncAPI's 3.0.0 schema", async (t) => {
  // The spec bundles draft-07 itself: ajv's own copy of that meta-schema would clash with it.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, meta: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  const validate = ajv.compile((specs as unknown as { schemas: Record<string, object> }).schemas['3.0.0'] as object);
  const ok = validate(doc);
  t.ok(ok, JSON.stringify(validate.errors?.slice(0, 5), null, 1));
  t.equal(doc.asyncapi, '3.0.0');
});

t.test('its payloads are the published schemas; it names every method and frame of the stream', async (t) => {
  const schemas = jsonSchemas() as Record<string, Record<string, unknown>>;
  const messages = doc.components.messages as Record<string, { payload: Record<string, unknown> }>;
  const methods = new Set<string>();
  for (const [name, m] of Object.entries(messages)) {
    if (name === 'heartbeat') continue;
    const published = Object.values(schemas).find((s) => s.title === m.payload.title);
    t.ok(published, `${name}: its payload is a published schema (${String(m.payload.title)})`);
    const { $schema: _ignored, ...withoutDialect } = published ?? {};
    t.same(m.payload, withoutDialect, `${name}: the same schema`);
    const method = (m.payload.properties as Record<string, { const?: string; enum?: string[] }> | undefined)?.method;
    for (const v of [method?.const, ...(method?.enum ?? [])]) if (v) methods.add(v);
  }
  t.same([...methods].sort(), ['auth', 'error', 'refresh', 'refreshed', 'session', 'status', 'subscribe', 'subscribed', 'unsubscribe', 'unsubscribed', 'unwatch_sessions', 'watch_sessions'].sort());
  t.equal(messages.heartbeat?.payload.const, '💓');
  t.same(Object.keys(doc.operations).sort(), ['receiveFrames', 'sendRequests']);
});
