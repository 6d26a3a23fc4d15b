/**
 * `horologium mcp-proxy --session S -- <command> [args…]`: mounts an MCP server through Horologium
 * for any MCP host (Claude Desktop, Cursor, VS Code, an agent): a stdio MCP server that starts the
 * upstream one and forwards everything unchanged, posting each tools/call and its result to the
 * session (src/integrations/mcp-proxy.ts). Needs the optional @modelcontextprotocol/sdk.
 */
import type { Command } from 'commander';
import { UsageError, reportingErrors, withConnection, type ConnectionFlags } from './connection.js';

interface McpProxyFlags extends ConnectionFlags {
  session?: string;
}

export function mcpProxyCommand(program: Command): void {
  withConnection(
    program
      .command('mcp-proxy')
      .description('run an MCP server (stdio) through Horologium: every tool call and result posted to a session')
      .requiredOption('--session <session>', 'the session each tool call is posted to')
      .argument('<command>', 'the upstream MCP server command (after --)')
      .argument('[args...]', 'its arguments')
      .addHelpText(
        'after',
        '\nExample (an MCP host\'s server entry): horologium mcp-proxy --url http://127.0.0.1:8080 --session desktop -- npx -y @modelcontextprotocol/server-filesystem ~/code\nStdout carries MCP only; warnings go to stderr. Horologium being down never breaks a tool call.',
      ),
  ).action(
    reportingErrors(async (command: string, args: string[], flags: McpProxyFlags) => {
      if (!flags.session) throw new UsageError('--session is needed: the session each tool call is posted to');
      // Loaded here: the other commands start without them.
      const [{ Producer }, proxy] = await Promise.all([import('../producer/producer.js'), import('../integrations/mcp-proxy.js')]);
      let running;
      try {
        running = await proxy.startMcpProxy({
          producer: new Producer({ url: flags.url, ...(flags.token ? { token: flags.token } : {}) }),
          session: flags.session,
          command,
          args,
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') {
          throw new UsageError('mcp-proxy needs the MCP SDK: npm install @modelcontextprotocol/sdk');
        }
        throw err;
      }
      await running.closed;
      await running.close(5000);
    }),
  );
}
