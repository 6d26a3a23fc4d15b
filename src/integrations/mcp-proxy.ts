/**
 * `horologium-sdk/mcp`: an MCP server's tool calls watched in Horologium from any MCP host (issue 47,
 * part 4), behind `horologium mcp-proxy`. The proxy is a stdio MCP server to the host and a stdio
 * client of the upstream server it starts; every JSON-RPC message goes through unchanged, both ways
 * (initialize and capabilities, tools/list, resources, prompts, notifications, cancellation), so the
 * host talks to the upstream server as if directly. It only watches: for each `tools/call` request
 * it posts the call (the tool's name and arguments; the call_id is made here, as JSON-RPC ids repeat
 * across connections) and, when the reply comes, the `CallToolResult` (its `isError` as is_error; a
 * JSON-RPC error as an is_error result). Posts go out in the background: Horologium being down never
 * delays or breaks a tool call. Nothing but MCP goes to stdout; warnings go to stderr.
 */
import { randomUUID } from 'node:crypto';
import type { JsonInput, Producer } from '../producer/producer.js';
import { BackgroundPoster } from './background-poster.js';

export interface McpProxyOptions {
  producer: Producer;
  /** The session every call is posted to. */
  session: string;
  /** The upstream stdio MCP server: its command and arguments (and optionally environment and folder). */
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Where warnings go (default: stderr, never stdout). */
  warn?(message: string): void;
}

/** A JSON-RPC message, as far as the proxy reads it. */
interface Message {
  id?: string | number;
  method?: string;
  params?: { name?: unknown; arguments?: unknown };
  result?: { isError?: unknown };
  error?: { message?: unknown; code?: unknown };
}

export interface RunningProxy {
  /** Resolves when either side closed (the host ended, or the upstream server exited). */
  closed: Promise<void>;
  /** Closes both sides, then waits for the posts in flight (at most `timeoutMs`). */
  close(timeoutMs?: number): Promise<void>;
}

/** Starts the proxy on this process's stdin and stdout. */
export async function startMcpProxy(options: McpProxyOptions): Promise<RunningProxy> {
  // Loaded here: the MCP SDK is an optional peer, needed only by this entry.
  const [{ StdioServerTransport }, { StdioClientTransport, getDefaultEnvironment }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
  ]);
  const warn = options.warn ?? ((message: string) => process.stderr.write(`${message}\n`));
  const poster = new BackgroundPoster(options.producer, { warn });
  const host = new StdioServerTransport();
  const upstream = new StdioClientTransport({
    command: options.command,
    args: options.args ?? [],
    env: { ...getDefaultEnvironment(), ...(options.env ?? {}) },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stderr: 'inherit',
  });
  /** The tools/call requests still waiting for their reply, by JSON-RPC id. */
  const calls = new Map<string | number, { callId: string; name: string; args: JsonInput; started: number }>();

  let closing = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const closeBoth = async () => {
    if (closing) return;
    closing = true;
    await Promise.allSettled([host.close(), upstream.close()]);
    resolveClosed();
  };

  host.onmessage = (message) => {
    const m = message as Message;
    if (m.method === 'tools/call' && m.id !== undefined && typeof m.params?.name === 'string') {
      const call = { callId: `mcp-${randomUUID()}`, name: m.params.name, args: (m.params.arguments ?? null) as JsonInput, started: performance.now() };
      calls.set(m.id, call);
      poster.call({ session: options.session, ...call });
    }
    upstream.send(message).catch((err: unknown) => warn(`horologium mcp-proxy: could not forward to the upstream server: ${(err as Error).message}`));
  };
  upstream.onmessage = (message) => {
    const m = message as Message;
    const call = m.id !== undefined && m.method === undefined ? calls.get(m.id) : undefined;
    if (call && m.id !== undefined) {
      calls.delete(m.id);
      const failed = m.error !== undefined;
      poster.result({
        session: options.session,
        ...call,
        result: (failed ? { error: String(m.error?.message ?? 'error'), code: m.error?.code ?? null } : (m.result ?? null)) as JsonInput,
        isError: failed || m.result?.isError === true,
        executionTime: (performance.now() - call.started) / 1000,
      });
    }
    host.send(message).catch(() => undefined);
  };
  host.onclose = () => void closeBoth();
  // The host ending our stdin is the end of the session (the transport itself does not report it).
  process.stdin.once('end', () => void closeBoth());
  upstream.onclose = () => void closeBoth();
  host.onerror = (err) => warn(`horologium mcp-proxy: host: ${err.message}`);
  upstream.onerror = (err) => warn(`horologium mcp-proxy: upstream: ${err.message}`);

  await upstream.start();
  await host.start();
  return {
    closed,
    async close(timeoutMs = 5000) {
      await closeBoth();
      await poster.flush(timeoutMs);
    },
  };
}
