/**
 * An AG-UI client watching a Horologium session, as a CopilotKit front end's agent would:
 * @ag-ui/client's HttpAgent pointed at POST /v1/ag-ui, joining with one MESSAGES_SNAPSHOT
 * (`forwardedProps.snapshot`) instead of every past event, then live. It prints the agent's
 * messages as one JSON line each time they change, and ends when the session is deleted.
 *
 *   HOROLOGIUM_URL=http://127.0.0.1:8080 SESSION=demo [TOKEN=…] npx tsx examples/ag-ui-watch/watch.ts
 *
 * In CopilotKit, the same HttpAgent is what you register as the runtime's agent for this thread.
 */
import { HttpAgent } from '@ag-ui/client';

const url = process.env.HOROLOGIUM_URL ?? 'http://127.0.0.1:8080';
const session = process.env.SESSION ?? 'demo';
const token = process.env.TOKEN;

const agent = new HttpAgent({
  url: `${url}/v1/ag-ui`,
  threadId: session,
  headers: token ? { Authorization: `Bearer ${token}` } : {},
});

await agent.runAgent(
  { forwardedProps: { snapshot: true } },
  {
    onMessagesChanged: ({ messages }) => console.log(JSON.stringify({ messages })),
    onRunFinishedEvent: () => console.error(`session ${session} was deleted: the run finished`),
  },
);
