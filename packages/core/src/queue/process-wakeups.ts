/**
 * Wake-ups among the queue instances of one process: an enqueue wakes the
 * listeners of the same queue in this process at once, whatever the engine
 * can (or cannot) tell other processes.  A backend keeps one of these per
 * module and names each queue by a channel string that every instance of
 * that queue shares (a file and table, a key prefix...).
 *
 * ```ts
 * import { ProcessWakeups } from "@fedwork/core/queue-kit";
 *
 * const wakeups = new ProcessWakeups();
 * const stop = wakeups.subscribe("jobs", () => console.log("claim now"));
 * wakeups.notify("jobs"); // logs "claim now"
 * stop();
 * ```
 * @since 0.4.0
 */
export class ProcessWakeups {
  readonly #channels = new Map<string, Set<() => void>>();

  /**
   * Calls `wake` whenever {@link ProcessWakeups.notify} is called on
   * `channel`, until the returned function is called.  The same function
   * subscribed twice is called twice.
   * @param channel The queue's channel.
   * @param wake Makes a listener claim at once.
   * @returns Unsubscribes.
   * @since 0.4.0
   */
  subscribe(channel: string, wake: () => void): () => void {
    let set = this.#channels.get(channel);
    if (set == null) {
      set = new Set();
      this.#channels.set(channel, set);
    }
    const entry = () => wake();
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.#channels.get(channel) === set) this.#channels.delete(channel);
    };
  }

  /**
   * Wakes every listener of this process subscribed to `channel`.
   * @param channel The queue's channel.
   * @since 0.4.0
   */
  notify(channel: string): void {
    const set = this.#channels.get(channel);
    if (set == null) return;
    for (const wake of [...set]) wake();
  }
}
