/**
 * The Redis versions this backend runs on: 7.0 and later, for sharded pub/sub (SPUBLISH and
 * SSUBSCRIBE, which carry each session's events on a channel of its own). An older server is
 * refused at start-up with a sentence that says so, rather than failing on the first write.
 */
export const MIN_REDIS_MAJOR = 7;

/** The server's version from `INFO server`, or undefined when the reply does not name one. */
export function redisVersion(info: string): string | undefined {
  return /^redis_version:([^\r\n]+)/m.exec(info)?.[1]?.trim();
}

/** Why a server of this version cannot be used, or undefined when it can. */
export function versionProblem(version: string | undefined): string | undefined {
  if (version === undefined) return undefined; // A server that hides its version (a proxy): the first SPUBLISH tells.
  const major = Number(version.split('.')[0]);
  if (Number.isInteger(major) && major >= MIN_REDIS_MAJOR) return undefined;
  return `Redis ${version} is too old: Horologium needs Redis ${MIN_REDIS_MAJOR}.0 or later (sharded pub/sub: SPUBLISH, SSUBSCRIBE)`;
}
