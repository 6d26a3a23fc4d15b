/** Waiting in tests: for a condition to hold (failing loudly when it never does), or for time itself. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `pred()` holds (or resolves true); rejects with `what` when it still does not after `ms`. */
export async function until(pred: () => boolean | Promise<boolean>, what = 'the condition', ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await pred()); await sleep(20)) {
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
  }
}
