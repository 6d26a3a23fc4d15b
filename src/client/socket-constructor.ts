/**
 * Which WebSocket class the stream client uses: the one given, else the global one (browsers,
 * Node 22+), else the optional peer `ws`, loaded here so that Node 20 works without ceremony. When
 * none is found the client's constructor throws at once with what to do, instead of a TypeError at
 * the first connection.
 */
import type { SocketConstructor } from './index.js';

/** The message when no WebSocket class can be found; exported for the tests. */
export const NO_WEBSOCKET =
  'horologium-sdk/client: no WebSocket class here: this runtime has no global WebSocket (Node.js before 22) and the optional peer "ws" is not installed. Install it (npm install ws), pass { WebSocket } to HorologiumClient, or use Node.js 22 or later.';

interface NodeProcess {
  getBuiltinModule?(id: 'module'): { createRequire(from: string): (id: string) => unknown };
}

/** `ws` loaded beside this file, or undefined where it is not installed or this is not Node. */
function loadWs(): SocketConstructor | undefined {
  // process.getBuiltinModule (Node 20.16+) reaches `require` from an ES module without a static
  // import of node:module, which a browser bundle of the panel could not resolve.
  const nodeProcess = (globalThis as { process?: NodeProcess }).process;
  const moduleApi = nodeProcess?.getBuiltinModule?.('module');
  if (!moduleApi) return undefined;
  try {
    const ws = moduleApi.createRequire(import.meta.url)('ws') as SocketConstructor | { WebSocket?: SocketConstructor };
    return typeof ws === 'function' ? ws : ws.WebSocket;
  } catch {
    return undefined;
  }
}

export function socketConstructor(given: SocketConstructor | undefined): SocketConstructor {
  const found = given ?? (globalThis as { WebSocket?: SocketConstructor }).WebSocket ?? loadWs();
  if (!found) throw new Error(NO_WEBSOCKET);
  return found;
}
