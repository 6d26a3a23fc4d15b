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
  };
}

/** A summary as the wire carries it. */
export type SessionSummaryJson = ReturnType<typeof sessionSummaryJson>;
