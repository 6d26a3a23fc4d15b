/**
 * One session, live: replay from seq 0 through the project's client, then live events, as cards
 * (timeline.ts, cards.ts). Big sessions stay smooth because at most MAX_DOM cards are in the page:
 * the newest PAGE are drawn, "Show earlier" (or scrolling to the top) draws the page before, and
 * events are applied once per animation frame however fast they come. In follow mode (the view
 * is at its bottom) new cards scroll into view; a person who scrolled up keeps their place and gets
 * "N new: jump to latest". The header adds the session's totals (session-totals.ts), a filter by
 * tool and state (call-filter.ts: only matching calls are drawn, and paged, while it filters) and
 * the compact timeline of the calls (call-bars.ts), whose bars show their card.
 */
import type { SessionSummaryJson, StatusEvent, SubscribedInfo } from '../client/index.js';
import { CallBars } from './call-bars.js';
import { isFiltering, matches, NO_FILTER, type CallFilter } from './call-filter.js';
import { card, type CallState } from './cards.js';
import { copyButton } from './copy.js';
import { byId, el, replaceChildren } from './dom.js';
import { totalsOf, totalsText } from './session-totals.js';
import { Timeline, type Item, type ToolItem } from './timeline.js';

const PAGE = 200;
const MAX_DOM = 400;
/** Within this many pixels of the bottom counts as "at the bottom". */
const BOTTOM_SLACK = 48;
/** The totals and the call bars are drawn again at most this often (ms) while events stream in. */
const SUMMARY_EVERY_MS = 250;

export class SessionView {
  session: string | undefined;
  private readonly timeline = new Timeline();
  private pending: StatusEvent[] = [];
  private flushQueued = false;
  private epoch: string | undefined;
  /** The session's head seq as last known (the subscribed head, then each event); undefined before subscribed. */
  private head: number | undefined;
  /** The items the view pages through: timeline.items itself, or while filtering the ones that match. */
  private shown: Item[] = this.timeline.items;
  private filter: CallFilter = NO_FILTER;
  private readonly toolNames = new Set<string>();
  private summaryTimer: ReturnType<typeof setTimeout> | undefined;
  /** What the totals and bars were last drawn from (drawSummary), and when a scheduled draw last ran. */
  private summaryDrawn = '';
  private summaryAt = 0;
  /** The items drawn are shown[start, end). */
  private start = 0;
  private end = 0;
  private following = true;
  private readonly nodes = new Map<Item, HTMLElement>();
  private readonly root = byId('session-view');
  private readonly title = byId('session-title');
  private readonly meta = byId('session-meta');
  /** The epoch, behind a toggle: a person rarely needs it, a bug report does. */
  private readonly epochBox = byId('session-epoch');
  /** The model queue's head, committed cursor and lag: how far the model side is behind. */
  private readonly queueLine = byId('session-queue');
  private readonly deleteButton = byId<HTMLButtonElement>('delete-session');
  private readonly notices = byId('session-notices');
  private readonly scroller = byId('cards-scroller');
  private readonly cards = byId('cards');
  private readonly earlier = byId<HTMLButtonElement>('show-earlier');
  private readonly latest = byId<HTMLButtonElement>('jump-latest');
  private readonly totals = byId('session-totals');
  private readonly callTools = byId('call-tools');
  private readonly toolSelect = byId<HTMLSelectElement>('filter-tool');
  private readonly statusSelect = byId<HTMLSelectElement>('filter-status');
  private readonly filterCount = byId('filter-count');
  private readonly bars = new CallBars(byId('call-bars'), (item) => this.showCard(item));

  constructor() {
    const refilter = () => this.setFilter({ tool: this.toolSelect.value, status: this.statusSelect.value as CallState | '' });
    this.toolSelect.addEventListener('change', refilter);
    this.statusSelect.addEventListener('change', refilter);
    this.earlier.addEventListener('click', () => this.showEarlier());
    this.latest.addEventListener('click', () => this.jumpToLatest());
    this.scroller.addEventListener('scroll', () => this.scrolled(), { passive: true });
  }

  /** Shows `session` (or the empty state); the caller subscribes. */
  open(session: string | undefined): void {
    this.session = session;
    this.reset();
    this.epoch = this.head = undefined;
    this.epochBox.hidden = true;
    this.queueLine.hidden = true;
    this.deleteButton.hidden = session === undefined;
    this.root.dataset.view = session === undefined ? 'empty' : 'session';
    replaceChildren(this.notices);
    replaceChildren(this.title, session === undefined ? 'No session selected' : el('span', { class: 'session-id' }, session), session === undefined ? null : copyButton('session id', () => session));
    this.meta.textContent = session === undefined ? 'Pick a session on the left (↑/↓ or j/k, Enter).' : 'Subscribing…';
  }

  subscribed(info: SubscribedInfo): void {
    if (info.session !== this.session) return;
    if (this.epoch !== undefined && info.epoch !== this.epoch) {
      // A new incarnation (the log was reset or deleted): its seqs start again.
      this.reset();
      this.notice('reset', 'The session started again (a new epoch): showing its new events.');
    } else if (!info.recovered && this.head !== undefined && info.head < this.head) {
      // The same epoch behind what was shown (Redis restored from an earlier snapshot): the
      // log as it now is replaces what was drawn.
      this.reset();
      this.notice('reset', `The session's log went back to seq ${info.head}: showing it as it now is.`);
    }
    this.epoch = info.epoch;
    if (!info.recovered && info.oldest > 1) this.notice('gap', `Events before ${info.oldest} are no longer retained.`);
    this.showHead(info.head);
  }

  private showHead(head: number): void {
    this.head = head;
    this.meta.textContent = head === 0 ? 'No events yet: waiting for the first one.' : `${head} events`;
    this.epochBox.hidden = this.epoch === undefined || this.epoch === '';
    (this.epochBox.querySelector('code') as HTMLElement).textContent = this.epoch ?? '';
  }

  event(event: StatusEvent): void {
    if (event.session !== this.session) return;
    this.pending.push(event);
    if (this.flushQueued) return;
    this.flushQueued = true;
    // A hidden tab gets no animation frames; a timer keeps its state current.
    if (document.hidden) setTimeout(() => this.flush(), 100);
    else requestAnimationFrame(() => this.flush());
  }

  /** The session's model queue, from its summary (fetched on opening, then the watch's changes). */
  queue(summary: SessionSummaryJson): void {
    if (summary.session !== this.session) return;
    const lag = summary.queue_head - summary.committed;
    this.queueLine.textContent =
      summary.queue_head === 0 ? 'Model queue: empty' : `Model queue: ${summary.queue_head} entries · committed through ${summary.committed} · ${lag} unacknowledged`;
    this.queueLine.hidden = false;
  }

  /** Wires the delete action: `remove` deletes the session; refusals and failures are told here. */
  onDelete(remove: (session: string) => Promise<void>): void {
    this.deleteButton.addEventListener('click', () => {
      const session = this.session;
      if (session === undefined) return;
      if (!confirm(`Delete the session ${session}? Its events, its model queue and its call records are removed for good.`)) return;
      remove(session).catch((error: Error & { status?: number }) => {
        this.notice('forbidden', error.status === 403 ? `This token may not delete sessions (it needs the admin scope): ${error.message}` : `The session was not deleted: ${error.message}`);
      });
    });
  }

  deleted(session: string): void {
    if (session !== this.session) return;
    this.queueLine.hidden = true;
    this.reset();
    this.epoch = undefined;
    this.epochBox.hidden = true;
    this.notice('deleted', 'This session was deleted. Its next events, if any, appear here.');
  }

  refused(message: string): void {
    this.notice('forbidden', `This token cannot read this session: ${message}`);
    this.meta.textContent = 'Not allowed.';
  }

  private reset(): void {
    this.timeline.clear();
    this.shown = isFiltering(this.filter) ? [] : this.timeline.items;
    this.toolNames.clear();
    replaceChildren(this.toolSelect, el('option', { value: '' }, 'all tools'));
    if (this.filter.tool !== '') this.addToolOption(this.filter.tool);
    this.toolSelect.value = this.filter.tool;
    this.drawSummary();
    this.pending = [];
    this.nodes.clear();
    this.start = this.end = 0;
    replaceChildren(this.cards);
    this.following = true;
    this.updateControls();
  }

  private notice(kind: string, text: string): void {
    this.notices.querySelector(`[data-kind="${kind}"]`)?.remove();
    this.notices.append(el('p', { class: 'notice', 'data-kind': kind, role: 'status' }, text));
  }

  private flush(): void {
    this.flushQueued = false;
    const events = this.pending;
    this.pending = [];
    const before = this.timeline.items.length;
    const change = this.timeline.apply(events);
    const last = events.at(-1);
    if (last && this.head !== undefined && last.seq > this.head) this.showHead(last.seq);
    const added = this.timeline.items.slice(before);
    for (const item of added) if (item.kind === 'tool' && item.name) this.addToolOption(item.name);
    this.scheduleSummary();
    if (isFiltering(this.filter)) {
      // A call that changed state may enter or leave the filter: the matching list is made again.
      if (this.filter.status !== '' && change.updated.size > 0) return this.setFilter(this.filter);
      const matching = added.filter((item) => matches(item, this.filter));
      this.shown.push(...matching);
      change.added = matching.length;
      this.filterCount.textContent = `${this.shown.length} of ${this.timeline.items.length} shown`;
    }
    for (const item of change.updated) this.redraw(item);
    if (change.added > 0 && this.following) {
      const total = this.shown.length;
      if (total - this.start > MAX_DOM) this.drawRange(Math.max(0, total - PAGE), total);
      else this.appendTo(total);
      this.scrollToBottom();
    }
    this.updateControls();
  }

  private redraw(item: Item): void {
    const old = this.nodes.get(item);
    if (!old) return;
    const next = card(item, this.session ?? '');
    old.replaceWith(next);
    this.nodes.set(item, next);
  }

  /** Draws the items from `end` up to `to` at the bottom. */
  private appendTo(to: number): void {
    const fragment = document.createDocumentFragment();
    for (let i = this.end; i < to; i++) fragment.append(this.node(i));
    this.cards.append(fragment);
    this.end = to;
  }

  private drawRange(from: number, to: number): void {
    this.nodes.clear();
    replaceChildren(this.cards);
    this.start = this.end = from;
    this.appendTo(to);
  }

  private node(i: number): HTMLElement {
    const item = this.shown[i] as Item;
    const node = card(item, this.session ?? '');
    this.nodes.set(item, node);
    return node;
  }

  /** Draws the page before the first card drawn, keeping what is on screen where it was. */
  private showEarlier(): void {
    if (this.start === 0) return;
    const from = Math.max(0, this.start - PAGE);
    const anchor = this.cards.firstElementChild as HTMLElement | null;
    const anchorTop = anchor?.getBoundingClientRect().top ?? 0;
    const fragment = document.createDocumentFragment();
    for (let i = from; i < this.start; i++) fragment.append(this.node(i));
    this.cards.prepend(fragment);
    this.start = from;
    // Keep the DOM bounded: cards beyond MAX_DOM at the bottom go (they come back with "jump to latest").
    while (this.end - this.start > MAX_DOM) {
      const item = this.shown[--this.end] as Item;
      this.nodes.get(item)?.remove();
      this.nodes.delete(item);
      this.following = false;
    }
    if (anchor) this.scroller.scrollTop += anchor.getBoundingClientRect().top - anchorTop;
    this.updateControls();
  }

  private jumpToLatest(): void {
    const total = this.shown.length;
    this.drawRange(Math.max(0, total - PAGE), total);
    this.following = true;
    this.scrollToBottom();
    this.updateControls();
  }

  private scrolled(): void {
    const atBottom = this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight <= BOTTOM_SLACK;
    if (atBottom && this.end === this.shown.length) this.following = true;
    else if (!atBottom) this.following = false;
    if (this.scroller.scrollTop < 80 && this.start > 0) this.showEarlier();
    this.updateControls();
  }

  private scrollToBottom(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  private updateControls(): void {
    this.earlier.hidden = this.start === 0;
    this.earlier.textContent = `Show earlier (${this.start} more)`;
    const unseen = this.shown.length - this.end;
    this.latest.hidden = this.following && unseen === 0;
    this.latest.textContent = unseen > 0 ? `${unseen} new: jump to latest` : 'Jump to latest';
    this.root.dataset.following = String(this.following);
  }

  /** Draws only the calls that match `filter` (all items again with NO_FILTER), the newest page first. */
  private setFilter(filter: CallFilter): void {
    this.filter = filter;
    const filtering = isFiltering(filter);
    this.shown = filtering ? this.timeline.items.filter((item) => matches(item, filter)) : this.timeline.items;
    this.filterCount.textContent = filtering ? `${this.shown.length} of ${this.timeline.items.length} shown` : '';
    this.jumpToLatest();
    this.drawSummary();
  }

  /** Shows a call's card (from the call bars): the filter is kept if the call matches it, the card drawn, scrolled to and marked. */
  private showCard(item: ToolItem): void {
    if (!this.shown.includes(item)) this.setFilter(NO_FILTER);
    this.toolSelect.value = this.filter.tool;
    this.statusSelect.value = this.filter.status;
    const at = this.shown.indexOf(item);
    if (at < this.start || at >= this.end) this.drawRange(Math.max(0, at - PAGE / 2), Math.min(this.shown.length, Math.max(0, at - PAGE / 2) + PAGE));
    this.following = this.end === this.shown.length && at === this.end - 1;
    const node = this.nodes.get(item);
    this.cards.querySelector('.card.picked')?.classList.remove('picked');
    node?.classList.add('picked');
    node?.scrollIntoView({ block: 'center' });
    this.updateControls();
  }

  private addToolOption(name: string): void {
    if (this.toolNames.has(name)) return;
    this.toolNames.add(name);
    const options = [...this.toolNames].sort();
    const before = this.toolSelect.options[options.indexOf(name) + 1] ?? null;
    this.toolSelect.insertBefore(el('option', { value: name }, name), before);
  }

  /** Draws the summary now if it was not drawn in the last SUMMARY_EVERY_MS, else once that time is up. */
  private scheduleSummary(): void {
    if (this.summaryTimer !== undefined) return;
    const wait = this.summaryAt + SUMMARY_EVERY_MS - Date.now();
    if (wait <= 0) {
      this.summaryAt = Date.now();
      this.drawSummary();
      return;
    }
    this.summaryTimer = setTimeout(() => {
      this.summaryTimer = undefined;
      this.summaryAt = Date.now();
      this.drawSummary();
    }, wait);
  }

  /** The totals (of the whole session, whatever the filter) and the bars (of the calls shown). */
  private drawSummary(): void {
    const items = this.timeline.items;
    // Drawn again only when something changed: a bar under the pointer is not replaced for nothing.
    const drawn = `${this.timeline.lastSeq}/${items.length}/${this.shown.length}/${this.filter.tool}/${this.filter.status}`;
    if (drawn === this.summaryDrawn) return;
    this.summaryDrawn = drawn;
    const calls = this.shown.filter((item): item is ToolItem => item.kind === 'tool');
    const any = items.some((item) => item.kind === 'tool');
    this.totals.hidden = this.callTools.hidden = !any && !isFiltering(this.filter);
    this.totals.textContent = any ? totalsText(totalsOf(items)) : '';
    this.bars.draw(calls);
  }
}
