/** Whether a host name or address is this machine's own: where an open (no-auth) server may listen, and which browser origins it serves. */
import { isIP } from 'node:net';

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '::1', '[::1]']);

export function isLoopback(host: string): boolean {
  if (LOOPBACK_NAMES.has(host)) return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
