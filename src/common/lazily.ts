/**
 * A value made at its first use and kept: for modules a server loads only when a feature is first
 * asked for (`lazily(() => import('…'))`), so that start-up does not pay for what is not used. A
 * failed load is not kept: the next use tries again.
 */
export function lazily<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((err: unknown) => {
      made = undefined;
      throw err;
    });
    return made;
  };
}
