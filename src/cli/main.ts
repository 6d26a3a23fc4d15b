#!/usr/bin/env node
/**
 * The `horologium` command: `serve`, `tail`, `post`, `sessions`, `queue`, `delete`, `token`, `mcp-proxy`. Each command lives in
 * its own file; this one only assembles them (commander parses, writes `--help`, and refuses
 * unknown options).
 */
import { Command } from 'commander';
import { deleteCommand } from './delete-command.js';
import { mcpProxyCommand } from './mcp-proxy-command.js';
import { postCommand } from './post-command.js';
import { queueCommand } from './queue-command.js';
import { serveCommand } from './serve-command.js';
import { sessionsCommand } from './sessions-command.js';
import { tailCommand } from './tail-command.js';
import { tokenCommand } from './token-command.js';
import { VERSION } from '../common/version.js';

const program = new Command('horologium')
  .description('Streams AI-agent tool activity: run the server, or talk to one')
  .version(VERSION)
  .showHelpAfterError()
  .addHelpText('after', '\nClient commands read HOROLOGIUM_CLIENT_URL and HOROLOGIUM_CLIENT_TOKEN when --url and --token are not given.');
serveCommand(program);
tailCommand(program);
postCommand(program);
sessionsCommand(program);
queueCommand(program);
deleteCommand(program);
tokenCommand(program);
mcpProxyCommand(program);

await program.parseAsync(process.argv);
