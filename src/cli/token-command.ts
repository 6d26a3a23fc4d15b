/**
 * `horologium token`: prints a JWT the server accepts (docs/protocol.md section 7), signed HS256
 * with the server's HOROLOGIUM_JWT_SECRET: the scopes and sessions it allows and when it expires.
 * The same rules as the server's: a secret of at least 32 characters, known scopes only, at least
 * one session (an id, or a prefix ending in `*`; `*` for all).
 */
import { Option, type Command } from 'commander';
import { SCOPE_LIST, SCOPES, unknownScopes } from '../auth/scopes.js';
import { parseDuration } from '../common/duration.js';
import { reportingErrors, UsageError } from './connection.js';

interface TokenFlags {
  secret?: string;
  scope: string[];
  session: string[];
  ttl: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(/[ ,]+/).filter((s) => s !== '')];

export function tokenCommand(program: Command): void {
  program
    .command('token')
    .description('print a JWT for a server with HOROLOGIUM_JWT_SECRET (HS256)')
    .addOption(new Option('--secret <secret>', 'the server\'s HOROLOGIUM_JWT_SECRET (at least 32 characters)').env('HOROLOGIUM_JWT_SECRET'))
    .option('--scope <scope>', `a scope it allows: ${SCOPES.join(', ')} (repeat, or separate with commas)`, collect)
    .option('--session <pattern>', "a session it may touch: an id, or a prefix ending in * ('team-a:*'; '*' for all) (repeat)", collect)
    .option('--ttl <duration>', 'how long it is valid: a number with s, m, h or d', '1h')
    .addHelpText('after', "\nExample: horologium token --scope publish --session 'team-a:*' --ttl 1h")
    .action(
      reportingErrors(async (flags: TokenFlags) => {
        if (!flags.secret) throw new UsageError('--secret (or HOROLOGIUM_JWT_SECRET) is needed: the secret the server verifies tokens with');
        if (flags.secret.length < 32) throw new UsageError(`the secret must be at least 32 characters (the server refuses a shorter HOROLOGIUM_JWT_SECRET); this one has ${flags.secret.length}`);
        const scopes = flags.scope ?? [];
        if (scopes.length === 0) throw new UsageError(`--scope is needed: one or more of ${SCOPES.join(', ')}`);
        const unknown = unknownScopes(scopes);
        if (unknown.length > 0) throw new UsageError(`${unknown.join(', ')} is not a scope ${SCOPE_LIST}`);
        const sessions = flags.session ?? [];
        if (sessions.length === 0) throw new UsageError("--session is needed: a session id, or a prefix ending in * ('*' for all)");
        const ms = parseDuration(flags.ttl);
        if (ms === undefined || ms < 1000) throw new UsageError(`--ttl must be at least 1s, a number with s, m, h or d (such as 1h), not ${flags.ttl}`);
        // Loaded here: `horologium --help` and the other commands start without jose.
        const { SignJWT } = await import('jose');
        const token = await new SignJWT({ scope: [...new Set(scopes)].join(' '), sessions })
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuedAt()
          .setExpirationTime(Math.floor((Date.now() + ms) / 1000))
          .sign(new TextEncoder().encode(flags.secret));
        process.stdout.write(`${token}\n`);
      }),
    );
}
