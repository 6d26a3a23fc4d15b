/**
 * `horologium delete <session>`: deletes a session (scope `admin`; section 9): its events, its
 * queue and its call records; its subscribers are told. Exit status 1 when there is no such session.
 */
import type { Command } from 'commander';
import { HttpClient } from '../sdk-common/http-client.js';
import { httpOptions, reportingErrors, withConnection, type ConnectionFlags } from './connection.js';

export function deleteCommand(program: Command): void {
  withConnection(
    program
      .command('delete')
      .description('delete a session: its events, queue and call records (scope admin)')
      .argument('<session>', 'session id'),
  ).action(
    reportingErrors(async (session: string, flags: ConnectionFlags) => {
      const http = new HttpClient(httpOptions(flags));
      await http.request({ method: 'DELETE', path: `/v1/sessions/${encodeURIComponent(session)}` });
      process.stdout.write(`deleted ${session}\n`);
    }),
  );
}
