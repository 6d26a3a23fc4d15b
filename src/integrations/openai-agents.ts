/**
 * `horologium-sdk/openai-agents`: the OpenAI Agents SDK's tool calls watched in Horologium
 * (issue 47, part 3).
 *
 *   const runner = horologiumRunHooks(new Runner(), { producer, session: 'chat-1' });
 *   await runner.run(agent, input);
 *
 * It listens to the Runner's `agent_tool_start` and `agent_tool_end`: the call is posted as the tool
 * starts (call_id = the function call's callId, args = its arguments, parsed), the result as it
 * ends (what the tool returned to the model, the text the Runner gives the hook). Posts go out in the
 * background (background-poster.ts). The Agents SDK's hooks do not say whether a tool failed (its
 * error text is what goes to the model), so results are posted without is_error. Only the SDK's
 * types are imported: nothing of `@openai/agents` is loaded by this module.
 */
import type { Agent, RunContext, Runner, Tool } from '@openai/agents';
import type { JsonInput, Producer } from '../producer/producer.js';
import { BackgroundPoster, jsonOrText, sessionResolver, type PosterOptions } from './background-poster.js';

export interface RunHooksOptions extends PosterOptions {
  producer: Producer;
  /** The session: an id, or a function of the run's context and agent and the tool's name. */
  session: string | ((run: { context: RunContext<unknown>; agent: Agent<any, any>; toolName: string }) => string);
}

/** The fields of the Agents SDK's tool call items this module reads. */
interface ToolCallDetails {
  toolCall: { type?: string; callId?: string; id?: string; name?: string; arguments?: string };
}

const posters = new WeakMap<object, BackgroundPoster>();

/** A tool call's arguments: their JSON value when they are JSON text, else the text; null when there are none. */
const parsedArguments = (text: string | undefined): JsonInput => (text === undefined || text === '' ? null : jsonOrText(text));

/** Posts every tool call of `runner`'s runs and its result; returns the runner. */
export function horologiumRunHooks<R extends Runner>(runner: R, options: RunHooksOptions): R {
  const poster = new BackgroundPoster(options.producer, options);
  const sessionOf = sessionResolver(options.session);
  const open = new Map<string, { session: string; started: number }>();
  // A call item without callId or id (not a function call) gets an id of its own, kept with the item
  // so that its end finds the same one.
  const madeIds = new WeakMap<object, string>();
  const callIdOf = (details: ToolCallDetails | undefined, tool: Tool) => {
    const item = details?.toolCall;
    const given = item?.callId ?? item?.id;
    if (given !== undefined) return given;
    if (!item) return `${tool.name}-${crypto.randomUUID()}`;
    let made = madeIds.get(item);
    if (made === undefined) madeIds.set(item, (made = `${tool.name}-${crypto.randomUUID()}`));
    return made;
  };
  runner.on('agent_tool_start', (context: RunContext<unknown>, agent: Agent<any, any>, tool: Tool, details?: ToolCallDetails) => {
    const callId = callIdOf(details, tool);
    const session = sessionOf({ context, agent, toolName: tool.name });
    open.set(callId, { session, started: performance.now() });
    poster.call({ session, callId, name: tool.name, args: parsedArguments(details?.toolCall.arguments) });
  });
  runner.on('agent_tool_end', (context: RunContext<unknown>, agent: Agent<any, any>, tool: Tool, result: string, details?: ToolCallDetails) => {
    const callId = callIdOf(details, tool);
    const started = open.get(callId);
    open.delete(callId);
    poster.result({
      session: started?.session ?? sessionOf({ context, agent, toolName: tool.name }),
      callId,
      name: tool.name,
      args: parsedArguments(details?.toolCall.arguments),
      result: result as JsonInput,
      isError: false,
      ...(started ? { executionTime: (performance.now() - started.started) / 1000 } : {}),
    });
  });
  posters.set(runner, poster);
  return runner;
}

/** Waits for the posts of `runner` still in flight, at most `timeoutMs`: call it before a short-lived process ends. */
export async function flush(runner: Runner, timeoutMs = 10_000): Promise<void> {
  await posters.get(runner)?.flush(timeoutMs);
}
