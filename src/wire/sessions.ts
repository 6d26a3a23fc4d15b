/** The sessions list's JSON (docs/protocol.md section 9): a summary with its times as ISO 8601. */
export interface SummaryFields {
  session: string;
  epoch: string;
  head: number;
  oldest: number;
  queueHead: number;
  committed: number;
  createdAt: number;
  lastEventAt: number;
}

export function sessionSummaryJson(s: SummaryFields) {
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
