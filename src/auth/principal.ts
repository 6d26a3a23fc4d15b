/**
 * Who a request acts for (docs/protocol.md section 7): scopes, where `admin` implies the others, and
 * session patterns, each an exact session id or a prefix ending in `*` (`team-a:*`, or `*` for all).
 */
import { z } from 'zod';
import { SCOPE_LIST, SCOPES, type Scope } from './scopes.js';

/** One entry of HOROLOGIUM_TOKENS. */
export const staticToken = z.object({
  token: z.string().min(16, 'a static token must be at least 16 characters'),
  scopes: z.array(z.enum(SCOPES, { error: (issue) => `${JSON.stringify(issue.input)} is not a scope ${SCOPE_LIST}` })).min(1),
  sessions: z.array(z.string().min(1)).min(1),
});
export type StaticToken = z.infer<typeof staticToken>;

export interface Principal {
  /** Names the token without holding it (a hash prefix): the rate-limit key and a log field. */
  id: string;
  scopes: ReadonlySet<Scope>;
  /**
   * The scope names as the token gave them, in its order, those the server does not know included
   * (a JWT from an identity provider carries `openid profile …`): said back in a 403.
   */
  claimed: readonly string[];
  sessions: readonly string[];
  /** When the token stops being valid, in ms since the epoch; static tokens never expire. */
  expiresAt?: number;
}

/** Every request of a server with no auth configured (loopback only, or HOROLOGIUM_INSECURE=1). */
export const OPEN_PRINCIPAL: Principal = Object.freeze({ id: 'open', scopes: new Set<Scope>(['admin']), claimed: ['admin'], sessions: ['*'] });

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has('admin') || principal.scopes.has(scope);
}

export function coversSession(principal: Principal, session: string): boolean {
  return principal.sessions.some((pattern) =>
    pattern.endsWith('*') ? session.startsWith(pattern.slice(0, -1)) : pattern === session,
  );
}
