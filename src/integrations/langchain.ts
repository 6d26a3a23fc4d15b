/**
 * `horologium-sdk/langchain`: LangChain.js (and LangGraph) tools watched in Horologium through a
 * callback handler (issue 47, part 2).
 *
 *   const handler = new HorologiumCallbackHandler({ producer, session: 'chat-1' });
 *   await agent.invoke(input, { callbacks: [handler] });
 *
 * handleToolStart posts the call (call_id = the ToolCall's id when LangChain passes one, else the
 * run id; args = the input, parsed when it is JSON), handleToolEnd the result (a ToolMessage's
 * `content`, else the output), handleToolError an is_error result. Posts go out in the background
 * (background-poster.ts): the tool never waits for Horologium.
 */
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import { ToolMessage } from '@langchain/core/messages';
import type { JsonInput, Producer } from '../producer/producer.js';
import { BackgroundPoster, jsonOrText, sessionResolver, type PosterOptions } from './background-poster.js';

/** What the session function is told of a tool run. */
export interface LangChainToolRun {
  toolName: string;
  runId: string;
  parentRunId?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
}

export interface HorologiumCallbackHandlerOptions extends PosterOptions {
  producer: Producer;
  /** The session: an id, or a function of the tool run (its metadata, tags, run ids). */
  session: string | ((run: LangChainToolRun) => string);
}

interface OpenRun {
  session: string;
  callId: string;
  name: string;
  args: JsonInput;
  started: number;
}

/** A ToolMessage's content (what a tool called with a ToolCall returns), else the output itself (undefined as null). */
function resultOf(output: unknown): JsonInput {
  if (ToolMessage.isInstance(output)) return output.content as JsonInput;
  return (output === undefined ? null : output) as JsonInput;
}

export class HorologiumCallbackHandler extends BaseCallbackHandler {
  name = 'horologium';
  private readonly poster: BackgroundPoster;
  private readonly runs = new Map<string, OpenRun>();
  private readonly sessionOf: (run: LangChainToolRun) => string;

  constructor(private readonly options: HorologiumCallbackHandlerOptions) {
    super();
    this.poster = new BackgroundPoster(options.producer, options);
    this.sessionOf = sessionResolver(options.session);
  }

  override handleToolStart(tool: Serialized, input: string, runId: string, parentRunId?: string, tags?: string[], metadata?: Record<string, unknown>, runName?: string, toolCallId?: string): void {
    const name = runName ?? (tool as { name?: string }).name ?? tool.id?.at(-1) ?? 'tool';
    const run: OpenRun = {
      session: this.sessionOf({ toolName: name, runId, ...(parentRunId === undefined ? {} : { parentRunId }), ...(tags === undefined ? {} : { tags }), ...(metadata === undefined ? {} : { metadata }) }),
      callId: toolCallId ?? runId,
      name,
      args: jsonOrText(input),
      started: performance.now(),
    };
    this.runs.set(runId, run);
    this.poster.call(run);
  }

  override handleToolEnd(output: unknown, runId: string): void {
    const run = this.runs.get(runId);
    if (!run) return;
    this.runs.delete(runId);
    this.poster.result({ ...run, result: resultOf(output), isError: false, executionTime: (performance.now() - run.started) / 1000 });
  }

  override handleToolError(err: unknown, runId: string): void {
    const run = this.runs.get(runId);
    if (!run) return;
    this.runs.delete(runId);
    const message = err instanceof Error ? err.message : String(err);
    this.poster.result({ ...run, result: { error: message }, isError: true, executionTime: (performance.now() - run.started) / 1000 });
  }

  /** Waits for the posts still in flight, at most `timeoutMs`: call it before a short-lived process ends. */
  flush(timeoutMs = 10_000): Promise<void> {
    return this.poster.flush(timeoutMs);
  }
}
