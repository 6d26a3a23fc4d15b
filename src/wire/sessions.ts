/** One session as the sessions list shows it (docs/protocol.md section 9); times in ms. */
export interface SessionSummary {
  session: string;
  epoch: string;
  head: number;
  oldest: number;
  queueHead: number;
  committed: number;
  createdAt: number;
  lastEventAt: number;
  /** Calls announced by tool-calls and not completed yet (v1.2), kept at write time. */
  openCalls: number;
  /** Completed calls with is_error true (v1.2), kept at write time. */
  errors: number;
}

/** The list's `state=` filter (v1.2): running has open calls, failed has errors, idle neither. */
export const SESSION_STATES = ['running', 'failed', 'idle'] as const;
export type SessionState = (typeof SESSION_STATES)[number];

/** Whether a session (its open calls and errors) is in `state`. */
export function inState(s: { openCalls: number; errors: number }, state: SessionState): boolean {
  if (state === 'running') return s.openCalls > 0;
  if (state === 'failed') return s.errors > 0;
  return s.openCalls === 0 && s.errors === 0;
}

/** Its JSON: the members in the protocol's order, times as ISO 8601. */
export function sessionSummaryJson(s: SessionSummary) {
  return {
    session: s.session,
    epoch: s.epoch,
    head: s.head,
    oldest: s.oldest,
    queue_head: s.queueHead,
    committed: s.committed,
    created_at: new Date(s.createdAt).toISOString(),
    last_event_at: new Date(s.lastEventAt).toISOString(),
    open_calls: s.openCalls,
    errors: s.errors,
  };
}

/** A summary as the wire carries it. */
export type SessionSummaryJson = ReturnType<typeof sessionSummaryJson>;
