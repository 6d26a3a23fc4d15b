/** The ingest baseline: a bare Fastify route that parses the same body and replies 202. */
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/v1/sessions/:session/tool-results', async (request, reply) => {
  const body = request.body as { call_id: string };
  return reply.code(202).send({ call_id: body.call_id, queue_seq: 1, event_seq: 1, duplicate: false });
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
