/**
 * Which browser origins may use the server: the stream, the SSE streams and the HTTP API alike
 * (docs/panel.md, "Origins"). A request without an `Origin` header is not from a browser page and is not
 * concerned; one from an origin this refuses is answered 403 before anything else runs.
 *
 * - HOROLOGIUM_ALLOWED_ORIGINS set: exactly those origins (`*` for any), and the panel's own origin.
 * - Not set, auth on: any origin. Tokens are never ambient (no cookies), so a page that may call
 *   the API is a page that holds a token.
 * - Not set, no auth (the default, on loopback): loopback origins only (`http://localhost:*`,
 *   `http://127.0.0.1:*` and the rest of 127/8, `http://[::1]:*`, and https; the same names
 *   loopback.ts lets an open server listen on). Any other page the developer visits would
 *   otherwise read every session (cross-site WebSocket hijacking); a page reaching the server
 *   through DNS rebinding has its own, non-loopback origin and is refused too. With
 *   HOROLOGIUM_INSECURE=1 (open on a network address, on purpose) the panel's own origin is allowed.
 */

import { isLoopback } from './loopback.js';

/** `scheme://host[:port]`, lower-cased, without a trailing slash: how origins are compared. */
function normalise(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopback(url.hostname);
  } catch {
    return false;
  }
}

/**
 * The page was served by this server through the same host name (the built-in panel). The Host
 * header is the client's to choose, so this alone is no defence against DNS rebinding: it is
 * trusted only where auth or an explicit list already decides.
 */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}

export interface OriginSettings {
  allowedOrigins?: readonly string[];
  authEnabled: boolean;
  insecure: boolean;
}

export class OriginPolicy {
  private readonly listed: ReadonlySet<string> | undefined;

  constructor(private readonly settings: OriginSettings) {
    this.listed = settings.allowedOrigins && new Set(settings.allowedOrigins.map(normalise));
  }

  /** May a page of `origin` use this server, reached with Host `host`? */
  allows(origin: string, host: string | undefined): boolean {
    const o = normalise(origin);
    if (this.listed) return this.listed.has('*') || this.listed.has(o) || sameOrigin(o, host);
    if (this.settings.authEnabled) return true;
    return isLoopbackOrigin(o) || (this.settings.insecure && sameOrigin(o, host));
  }

  /** What a refusal says: which setting to change. */
  get refusal(): string {
    return this.listed
      ? 'This origin may not use this server (it is not in HOROLOGIUM_ALLOWED_ORIGINS).'
      : 'This server runs without auth and accepts browser pages from loopback origins only (set HOROLOGIUM_ALLOWED_ORIGINS, or configure auth).';
  }
}
