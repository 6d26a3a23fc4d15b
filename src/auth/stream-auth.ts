/**
 * Auth state of one stream connection (docs/protocol.md sections 5 and 7). A socket opened without a
 * token must send `auth` as its first message within AUTH_TIMEOUT_MS; a token with an `exp` closes
 * the socket with 4001 when it expires, unless `refresh` brought a newer one in time.
 */
import type { AuthFailureKind } from './authenticator.js';
import type { Principal } from './principal.js';

export const AUTH_TIMEOUT_MS = 5000;
/** setTimeout's largest delay; a later expiry is re-armed when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Who is told when the connection's auth runs out: it closes the socket with 4001. */
export interface AuthExpiry {
  authExpired(reason: string, kind: AuthFailureKind): void;
}

export class StreamAuth {
  principal?: Principal;
  private timer?: NodeJS.Timeout;

  /** An owner object rather than a callback: one closure less on every connection (issue 31). */
  constructor(private readonly owner: AuthExpiry) {}

  /** Starts with the upgrade's principal, or waits for the `auth` message. */
  start(principal: Principal | undefined): void {
    if (principal) this.set(principal);
    else this.arm(AUTH_TIMEOUT_MS, 'no auth message within 5 s', 'missing');
  }

  set(principal: Principal): void {
    this.principal = principal;
    this.clear();
    if (principal.expiresAt !== undefined) this.armUntil(principal.expiresAt);
  }

  dispose(): void {
    this.clear();
  }

  private armUntil(at: number): void {
    const left = at - Date.now();
    if (left <= MAX_TIMER_MS) this.arm(Math.max(0, left), 'the token has expired', 'expired');
    else this.timer = setTimeout(() => this.armUntil(at), MAX_TIMER_MS);
  }

  private arm(ms: number, reason: string, kind: AuthFailureKind): void {
    this.timer = setTimeout(() => this.owner.authExpired(reason, kind), ms);
    this.timer.unref();
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
