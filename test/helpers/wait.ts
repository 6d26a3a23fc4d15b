/** Waiting in tests: for a condition to hold (failing loudly when it never does), or for time itself. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `pred()` holds; rejects with `what` when it still does not after `ms`. */
export async function until(pred: () => boolean, what = 'the condition', ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !pred(); await sleep(20)) {
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
  }
}
