/**
 * Reference-counted subscriptions to pub/sub channels on one subscriber connection (redis.ts): the
 * first `follow` of a channel subscribes, and the last `unfollow` unsubscribes after a linger, so
 * that a panel that reconnects (or a long-poll that polls again) does not make the instance
 * subscribe and unsubscribe each time. `follow` resolves once the subscription is confirmed: every
 * message published after that reaches the connection, which is what lets a subscriber read the
 * store next and miss nothing (the replay-then-live rule).
 */

/** How a channel is subscribed and unsubscribed on the connection (SSUBSCRIBE or SUBSCRIBE). */
export interface ChannelOps {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
}

interface Interest {
  count: number;
  /** The subscription's confirmation (again after a reconnect). */
  ready: Promise<unknown>;
  linger: NodeJS.Timeout | undefined;
}

export class ChannelInterest {
  private readonly channels = new Map<string, Interest>();

  constructor(
    private readonly ops: ChannelOps,
    private readonly lingerMs: number,
  ) {}

  /** Resolves when `channel` is subscribed; rejects (and counts nothing) when it cannot be. */
  async follow(channel: string): Promise<void> {
    let interest = this.channels.get(channel);
    if (interest) {
      interest.count++;
      if (interest.linger) clearTimeout(interest.linger);
      interest.linger = undefined;
    } else {
      const created: Interest = { count: 1, ready: this.ops.subscribe(channel), linger: undefined };
      // Refused: forgotten at once (every follower waiting on it is refused too).
      const first = created.ready;
      first.catch(() => {
        if (this.channels.get(channel) === created && created.ready === first) this.channels.delete(channel);
      });
      this.channels.set(channel, (interest = created));
    }
    try {
      await interest.ready;
    } catch (err) {
      interest.count--;
      throw err;
    }
  }

  /** Gives back one `follow` that resolved; the last one unsubscribes after the linger. */
  unfollow(channel: string): void {
    const interest = this.channels.get(channel);
    if (!interest || --interest.count > 0) return;
    interest.linger = setTimeout(() => {
      if (this.channels.get(channel) !== interest || interest.count > 0) return;
      this.channels.delete(channel);
      // A failure means the connection is gone, and with it the subscription.
      this.ops.unsubscribe(channel).catch(() => undefined);
    }, this.lingerMs);
    interest.linger.unref();
  }

  /** Whether `channel` is subscribed or being subscribed (lingering included). */
  has(channel: string): boolean {
    return this.channels.has(channel);
  }

  /**
   * After the connection came back (its subscriptions are gone): subscribes every channel again and
   * calls `back` for each once it is confirmed, so that its followers re-read what they missed.
   */
  resubscribe(back: (channel: string) => void): void {
    for (const [channel, interest] of this.channels) {
      interest.ready = this.ops.subscribe(channel);
      interest.ready.then(
        () => back(channel),
        () => undefined, // Lost again: the next reconnect subscribes it again.
      );
    }
  }

  /** Forgets every channel (the connection is closing). */
  clear(): void {
    for (const interest of this.channels.values()) if (interest.linger) clearTimeout(interest.linger);
    this.channels.clear();
  }
}

/** A subscription Redis did not confirm in time (sent again once; any other failure is final). */
class NotConfirmed extends Error {}

/**
 * A subscription confirmed within `ms`, sent again once if not (on a cluster, a sharded subscriber
 * being replaced while the first was on its way may never answer it), else refused.
 */
export async function confirmedWithin<T>(subscribe: () => Promise<T>, ms: number, attempts = 2): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new NotConfirmed(`not confirmed in ${ms} ms`)), ms);
    });
    try {
      return await Promise.race([subscribe(), late]);
    } catch (err) {
      if (attempt >= attempts || !(err instanceof NotConfirmed)) throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}
