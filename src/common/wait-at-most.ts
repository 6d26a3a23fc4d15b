/**
 * Waits for `work` (its failure ignored) or `ms`, whichever comes first: a shutdown step that talks
 * to a peer (Redis's QUIT, the last spans' export) must not hold the shutdown up when the peer
 * does not answer. The timer does not keep the process alive.
 */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, ms).unref())]);
}
