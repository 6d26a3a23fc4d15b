/**
 * The panel's entry point: the sessions list, the session the hash names, the connection badge and
 * the token prompt, over one HorologiumClient (src/client) that reconnects and resumes by itself.
 * The list is fetched first: a 401 there shows the token prompt before any socket is opened.
 */
import { HorologiumClient } from '../client/index.js';
import { ApiError, deleteSession, sessionSummary, streamUrl } from './api.js';
import { ConnectionBadge } from './connection-badge.js';
import { Drawer } from './drawer.js';
import { currentRoute, onRouteChange, sessionHref } from './router.js';
import { SessionList } from './session-list.js';
import { SessionView } from './session-view.js';
import { TokenPrompt } from './token-prompt.js';
import { storedToken } from './token.js';

/** How often the open session's model queue line is read again. */
const QUEUE_REFRESH_MS = 5000;
const badge = new ConnectionBadge();
const drawer = new Drawer();
const list = new SessionList();
const view = new SessionView();
const prompt = new TokenPrompt(() => void start());
let client: HorologiumClient | undefined;
let lastClose: { code: number; reason: string } | undefined;

async function start(): Promise<void> {
  client?.close();
  client = undefined;
  prompt.update();
  badge.set('connecting', 'Connecting…');
  try {
    await list.load();
  } catch (error) {
    const e = error instanceof ApiError ? error : new ApiError(0, 'NETWORK', String(error));
    if (e.status === 401) {
      badge.set('unauthorized', 'Unauthorized: enter a token');
      prompt.show(storedToken() ? `The server refused this token: ${e.message}` : 'This server needs a token.');
    } else if (e.status === 403) {
      badge.set('forbidden', 'This token may not list sessions');
      prompt.show(`This token is valid but may not read sessions: ${e.message}`);
    } else {
      badge.set('reconnecting', 'Server unreachable: retrying in 2 s');
      setTimeout(() => void start(), 2000);
    }
    return;
  }
  prompt.hide();
  client = connect();
  route();
}

function connect(): HorologiumClient {
  const token = storedToken();
  const c: HorologiumClient = new HorologiumClient({
    url: streamUrl(),
    ...(token ? { token: () => storedToken() ?? token } : {}),
    onOpen: () => {
      lastClose = undefined;
      badge.set('connected', 'Live');
      c.watchSessions();
    },
    onClose: (info) => {
      lastClose = info;
      // A client this page replaced (a new token) closes late: its close says nothing now.
      if (c !== client || info.willReconnect || !badge.stateIs('connected', 'connecting')) return;
      badge.set('closed', `Closed (${info.code}${info.reason ? `: ${info.reason}` : ''}): reload to reconnect`, info.code);
    },
    onReconnecting: (info) => badge.reconnecting(info.attempt, info.delayMs, lastClose),
    onEvent: (event) => view.event(event),
    onSubscribed: (info) => view.subscribed(info),
    onUnsubscribed: (info) => {
      if (info.reason === 'deleted') view.deleted(info.session);
    },
    onSession: (change) => {
      list.onSession(change);
      if (!change.deleted) view.queue(change);
    },
    onError: (error) => {
      if (error.code === 'UNAUTHORIZED') {
        c.close();
        badge.set('unauthorized', 'Unauthorized: enter a token', 4001);
        prompt.show(`The stream refused the token: ${error.message}`);
      } else if (error.code === 'FORBIDDEN' && error.session === undefined) {
        badge.set('forbidden', `Forbidden: ${error.message}`, 4003);
      } else if (error.session !== undefined && error.session === view.session) {
        view.refused(error.message);
      }
    },
    backoff: { initialMs: 250, maxMs: 10_000 },
  });
  return c;
}

/** Opens the session the hash names (subscribing from seq 0), or the empty view. */
function route(): void {
  const r = currentRoute();
  const session = r.view === 'session' ? r.session : undefined;
  drawer.set(session === undefined); // on a phone, no session open: show the list
  if (session === view.session) return;
  if (view.session !== undefined) client?.unsubscribe(view.session);
  view.open(session);
  list.select(session);
  if (session !== undefined) {
    client?.subscribe(session, 0);
    refreshQueue();
  }
}

/** The open session's model queue line: fetched on opening and every few seconds, since an ack is
 *  not an event and so no watch frame tells of it. */
function refreshQueue(): void {
  const session = view.session;
  if (session === undefined || document.hidden) return;
  sessionSummary(session).then(
    (summary) => view.queue(summary),
    () => undefined, // not there yet, or not allowed: the next refresh or a watch frame fills it in
  );
}
setInterval(refreshQueue, QUEUE_REFRESH_MS);

view.onDelete(async (session) => {
  await deleteSession(session);
});

onRouteChange(() => route());

// Keyboard: ↑/↓ or k/j move between sessions, Enter opens the focused one, / filters.
document.addEventListener('keydown', (event) => {
  const target = event.target as HTMLElement;
  const typing = target.tagName === 'INPUT' || target.tagName === 'TEXTAREA';
  if (event.key === 'Escape' && typing) return target.blur();
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === '/') {
    event.preventDefault();
    list.focusFilter();
    return;
  }
  const step = event.key === 'ArrowDown' || event.key === 'j' ? 1 : event.key === 'ArrowUp' || event.key === 'k' ? -1 : 0;
  if (step === 0) return;
  event.preventDefault();
  const sessions = list.visible();
  if (sessions.length === 0) return;
  const at = sessions.findIndex((s) => s.session === view.session);
  const next = sessions[at === -1 ? (step > 0 ? 0 : sessions.length - 1) : Math.min(sessions.length - 1, Math.max(0, at + step))];
  if (next) location.hash = sessionHref(next.session);
});

void start();
