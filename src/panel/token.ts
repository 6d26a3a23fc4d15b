/**
 * The token the person entered, kept in sessionStorage only: it lasts as long as the tab, is never
 * written to localStorage, a cookie or a URL, and is sent as a bearer header (HTTP) and as the
 * stream's `auth` message (WebSocket).
 */
const KEY = 'horologium.token';

export function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeToken(token: string | undefined): void {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage disabled (a private mode): the token lasts until the page is reloaded.
  }
}
