/**
 * What a Redis server's own settings mean for this service's promises (docs/protocol.md section 6:
 * a 202 is durable): read once at start-up and again by /readyz (at most every REFRESH_MS), so an
 * operator who fixes the settings with CONFIG SET sees the warning go without a restart.
 */
import type { Redis } from 'ioredis';
import type { StoreWarning } from './types.js';

const REFRESH_MS = 10_000;

/** The warnings for a Redis with these settings (CONFIG GET's answers; undefined: not allowed). */
export function durabilityWarnings(settings: { policy?: string; appendonly?: string; appendfsync?: string } | undefined): StoreWarning[] {
  if (!settings) {
    return [
      {
        code: 'redis_config_unreadable',
        message:
          'redis: CONFIG GET is not allowed here, so the service cannot check it; make sure maxmemory-policy is noeviction and appendonly yes with appendfsync always, or acknowledged results can be lost',
      },
    ];
  }
  const warnings: StoreWarning[] = [];
  // volatile-* policies evict only keys with a TTL, and this service sets none.
  if (settings.policy?.startsWith('allkeys-')) {
    warnings.push({
      code: 'redis_evicts_keys',
      message: `redis: maxmemory-policy is ${settings.policy}: Redis may evict a session's keys and lose acknowledged results; set maxmemory-policy noeviction`,
    });
  }
  if (settings.appendonly !== 'yes') {
    warnings.push({
      code: 'redis_no_aof',
      message: 'redis: appendonly is no: a 202 is not durable, Redis loses what it acknowledged since its last snapshot when it stops; set appendonly yes and appendfsync always',
    });
  } else if (settings.appendfsync !== 'always') {
    warnings.push({
      code: 'redis_aof_not_always',
      message: `redis: appendfsync is ${settings.appendfsync ?? 'unknown'}: a 202 is not durable, Redis can lose up to a second of acknowledged writes when its host stops; set appendfsync always`,
    });
  }
  return warnings;
}

/** Reads the settings from a connected Redis; undefined where CONFIG is refused (many managed services). */
async function readSettings(redis: Redis): Promise<Parameters<typeof durabilityWarnings>[0]> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy', 'appendonly', 'appendfsync')) as string[];
    const map = new Map<string, string>();
    for (let k = 0; k + 1 < reply.length; k += 2) map.set(reply[k] as string, reply[k + 1] as string);
    return { policy: map.get('maxmemory-policy'), appendonly: map.get('appendonly'), appendfsync: map.get('appendfsync') };
  } catch {
    return undefined;
  }
}

/** The current warnings of one Redis, read again when older than REFRESH_MS. */
export class DurabilityCheck {
  private warnings: StoreWarning[] = [];
  private readAt = 0;
  private reading: Promise<StoreWarning[]> | undefined;

  constructor(private readonly redis: Redis) {}

  async current(): Promise<StoreWarning[]> {
    if (Date.now() - this.readAt < REFRESH_MS) return this.warnings;
    this.reading ??= readSettings(this.redis)
      .then((settings) => {
        this.warnings = durabilityWarnings(settings);
        this.readAt = Date.now();
        return this.warnings;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
