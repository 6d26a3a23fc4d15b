/**
 * The options every client command of the CLI shares: which server and which token. Defaults come
 * from HOROLOGIUM_CLIENT_URL and HOROLOGIUM_CLIENT_TOKEN (client-side names, so that the server's
 * own HOROLOGIUM_* settings are never mistaken for them), then http://127.0.0.1:8080 and no token.
 */
import { Option, type Command } from 'commander';
import { HorologiumRequestError } from '../sdk-common/http-client.js';

export interface ConnectionFlags {
  url: string;
  token?: string;
}

export function withConnection(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', 'server base URL').env('HOROLOGIUM_CLIENT_URL').default('http://127.0.0.1:8080'))
    .addOption(new Option('--token <token>', 'bearer token (scopes as the command needs)').env('HOROLOGIUM_CLIENT_TOKEN'));
}

/** The HTTP options of the SDK for the flags: one quick retry budget suits a person at a terminal. */
export function httpOptions(flags: ConnectionFlags): { url: string; token?: string; retries: number } {
  return { url: flags.url, ...(flags.token ? { token: flags.token } : {}), retries: 2 };
}

/** The stream URL of a base URL: http(s)://host/… becomes ws(s)://host/v1/stream. */
export function streamUrl(base: string): string {
  const url = new URL('/v1/stream', base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** Runs a command's action; a request error is one line on stderr and exit status 1. */
export function reportingErrors<A extends unknown[]>(action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (err) {
      if (err instanceof HorologiumRequestError || err instanceof UsageError) {
        process.stderr.write(`horologium: ${err.message}\n`);
        process.exitCode = err instanceof UsageError ? 2 : 1;
        return;
      }
      throw err;
    }
  };
}

/** A command used wrongly in a way commander cannot see (a JSON flag that is not JSON, say). */
export class UsageError extends Error {}

/** An integer flag's value, at least `min`; anything else is a UsageError naming the flag. */
export function integerFlag(text: string, flag: string, min: number): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be an integer of at least ${min}, not ${text}`);
  return n;
}
