/** Hash routes, so deep links work from a static page: `#/sessions/<id>` opens a session. */
export type Route = { view: 'list' } | { view: 'session'; session: string };

export function currentRoute(): Route {
  const match = /^#\/sessions\/(.+)$/.exec(location.hash);
  if (!match) return { view: 'list' };
  try {
    return { view: 'session', session: decodeURIComponent(match[1] as string) };
  } catch {
    return { view: 'list' };
  }
}

export function sessionHref(session: string): string {
  return `#/sessions/${encodeURIComponent(session)}`;
}

export function onRouteChange(listener: (route: Route) => void): void {
  window.addEventListener('hashchange', () => listener(currentRoute()));
}
