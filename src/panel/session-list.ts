/**
 * The sessions list: every session the token covers, most recently active first, paged from
 * `GET v1/sessions` ("Load more") and kept live by the stream's `watch_sessions`. The filter keeps
 * the loaded sessions whose id contains the text and also asks the server for ids starting with it,
 * so a session beyond the loaded pages is found. "Running" means an event in the last 30 seconds.
 */
import type { SessionChange, SessionSummaryJson } from '../client/index.js';
import { listSessions } from './api.js';
import { byId, el, replaceChildren } from './dom.js';
import { ago } from './format.js';
import { sessionHref } from './router.js';

const RUNNING_MS = 30_000;
const PAGE = 100;

export class SessionList {
  private readonly sessions = new Map<string, SessionSummaryJson>();
  private next: string | null = null;
  private filter = '';
  private selected: string | undefined;
  private drawQueued = false;
  private readonly list = byId<HTMLOListElement>('session-items');
  private readonly filterInput = byId<HTMLInputElement>('session-filter');
  private readonly more = byId<HTMLButtonElement>('load-more');
  private readonly count = byId('session-count');
  private filterTimer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    this.more.addEventListener('click', () => void this.loadMore().catch(() => undefined));
    this.filterInput.addEventListener('input', () => {
      this.filter = this.filterInput.value.trim();
      this.draw();
      clearTimeout(this.filterTimer);
      this.filterTimer = setTimeout(() => void this.searchServer(this.filter).catch(() => undefined), 200);
    });
    // Relative times and running/idle move on without events.
    setInterval(() => this.draw(), 5000);
  }

  /** The first page; throws the ApiError (401, 403, network) for the caller to show. */
  async load(): Promise<void> {
    const page = await listSessions({ limit: PAGE });
    this.sessions.clear();
    this.merge(page.sessions);
    this.next = page.next;
    this.draw();
  }

  private async loadMore(): Promise<void> {
    if (!this.next) return;
    const page = await listSessions({ cursor: this.next, limit: PAGE });
    this.merge(page.sessions);
    this.next = page.next;
    this.draw();
  }

  private async searchServer(prefix: string): Promise<void> {
    if (!prefix || prefix !== this.filter) return;
    const page = await listSessions({ prefix, limit: PAGE });
    this.merge(page.sessions);
    this.draw();
  }

  onSession(change: SessionChange): void {
    if (change.deleted) this.sessions.delete(change.session);
    else this.merge([change]);
    this.queueDraw();
  }

  select(session: string | undefined): void {
    this.selected = session;
    this.draw();
    this.list.querySelector('[aria-current]')?.scrollIntoView({ block: 'nearest' });
  }

  /** The visible sessions in their order: what the keyboard moves through. */
  visible(): SessionSummaryJson[] {
    const needle = this.filter.toLowerCase();
    return [...this.sessions.values()]
      .filter((s) => !needle || s.session.toLowerCase().includes(needle))
      .sort((a, b) => b.last_event_at.localeCompare(a.last_event_at) || a.session.localeCompare(b.session));
  }

  focusFilter(): void {
    this.filterInput.focus();
    this.filterInput.select();
  }

  private merge(summaries: SessionSummaryJson[]): void {
    for (const s of summaries) {
      const known = this.sessions.get(s.session);
      // A page fetched before a live change must not put an older state back.
      if (!known || known.epoch !== s.epoch || s.head >= known.head) this.sessions.set(s.session, s);
    }
  }

  /** Live changes arrive in bursts: one draw per frame. */
  private queueDraw(): void {
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame(() => {
      this.drawQueued = false;
      this.draw();
    });
  }

  private draw(): void {
    const now = Date.now();
    const visible = this.visible();
    replaceChildren(
      this.list,
      ...visible.map((s) => {
        const running = now - Date.parse(s.last_event_at) < RUNNING_MS;
        return el(
          'li',
          {},
          el(
            'a',
            {
              class: 'session-item',
              href: sessionHref(s.session),
              'data-session': s.session,
              'data-activity': running ? 'running' : 'idle',
              'aria-current': s.session === this.selected ? 'page' : undefined,
            },
            el('span', { class: 'activity', title: running ? 'running: an event in the last 30 s' : 'idle' }),
            el('span', { class: 'session-id' }, s.session),
            el('span', { class: 'session-meta' }, el('span', { class: 'head' }, s.head === 1 ? '1 event' : `${s.head} events`), ' · ', el('time', { datetime: s.last_event_at, title: s.last_event_at }, ago(s.last_event_at, now))),
          ),
        );
      }),
    );
    if (visible.length === 0) this.list.append(el('li', { class: 'empty' }, this.sessions.size === 0 ? 'No sessions yet. Post a tool call and it appears here.' : 'No session matches the filter.'));
    const total = this.sessions.size;
    this.count.textContent = this.filter ? `${visible.length} of ${total}${this.next ? '+' : ''}` : `${total}${this.next ? '+' : ''}`;
    this.more.hidden = this.next === null;
  }
}
