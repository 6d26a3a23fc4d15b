/**
 * Picks the Store backend named by HOROLOGIUM_STORE. The Redis backend (ioredis and its scripts) is
 * loaded only when named, so the embedded default starts without it.
 */
import { MemoryStore } from './memory.js';
import { SqliteStore } from './sqlite.js';
import type { Store, StoreOptions } from './types.js';

export async function createStore(url: string, options: StoreOptions): Promise<Store> {
  if (url === 'memory:') return new MemoryStore(options);
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    // Two connections (the writer thread's and the readers') must see one file.
    if (path === ':memory:' || path === '') throw new Error('HOROLOGIUM_STORE: sqlite: needs a file path (use memory: for a store that keeps nothing)');
    return new SqliteStore(path, options);
  }
  if (/^rediss?(\+cluster)?:\/\//.test(url)) return new (await import('./redis.js')).RedisStore(url, options);
  throw new Error(`HOROLOGIUM_STORE: unknown store ${url}`);
}
