/**
 * A page that watches one Horologium session with the AI SDK's `useChat`: the session is one
 * assistant message whose parts are its tool calls (dynamic-tool parts) and its other events
 * (data-<type> parts). Horologium answers the reconnect that `resume: true` makes; sending
 * messages would go to your own backend (`api`), which this page does not use.
 *
 * Open it with ?server=<Horologium's URL>&session=<session id>[&token=<a subscribe token>].
 */
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, type UIMessage } from 'ai';
import { useEffect } from 'react';
import { createRoot } from 'react-dom/client';

const params = new URLSearchParams(location.search);
const server = params.get('server') ?? 'http://127.0.0.1:8080';
const session = params.get('session') ?? 'demo';
const token = params.get('token');

const transport = new DefaultChatTransport<UIMessage>({
  api: '/api/chat',
  prepareReconnectToStreamRequest: ({ id }) => ({
    api: `${server}/v1/sessions/${encodeURIComponent(id)}/ui-message-stream`,
    headers: token ? { Authorization: `Bearer ${token}` } : ({} as Record<string, string>),
  }),
});

type Part = UIMessage['parts'][number];

function ToolCard({ part }: { part: Extract<Part, { type: 'dynamic-tool' }> }) {
  return (
    <article className="tool" data-call-id={part.toolCallId} data-state={part.state}>
      <strong>{part.toolName}</strong>
      <span className="state">{part.state}</span>
      <pre className="input">{JSON.stringify(part.input)}</pre>
      {part.state === 'output-available' && <pre className="output">{typeof part.output === 'string' ? part.output : JSON.stringify(part.output)}</pre>}
      {part.state === 'output-error' && <pre className="error">{part.errorText}</pre>}
    </article>
  );
}

function PartView({ part }: { part: Part }) {
  if (part.type === 'dynamic-tool') return <ToolCard part={part} />;
  if (part.type === 'data-horologium-subscribed') return <p className="notice">The session's log started again.</p>;
  if (part.type.startsWith('data-')) {
    const data = part as { type: string; id?: string; data: unknown };
    return (
      <div className="data" data-type={data.type.slice(5)} data-id={data.id}>
        {data.type.slice(5)}: {JSON.stringify(data.data)}
      </div>
    );
  }
  return null;
}

function App() {
  const { messages, status, resumeStream } = useChat({ id: session, resume: true, transport });
  // The stream ends when Horologium restarts (or this page's connection drops): read it again.
  // Every chunk is keyed, so reading the session again leaves the message as it was.
  useEffect(() => {
    if (status !== 'ready' && status !== 'error') return;
    const timer = setTimeout(() => void resumeStream(), 1000);
    return () => clearTimeout(timer);
  }, [status, resumeStream]);
  return (
    <main>
      <h1>
        Session <code>{session}</code> <span id="status">{status}</span>
      </h1>
      {messages.map((m) => (
        <section key={m.id} data-message-id={m.id}>
          {m.parts.map((part, k) => (
            <PartView key={'toolCallId' in part ? part.toolCallId : 'id' in part && part.id ? part.id : k} part={part} />
          ))}
        </section>
      ))}
    </main>
  );
}

createRoot(document.getElementById('root') as HTMLElement).render(<App />);
