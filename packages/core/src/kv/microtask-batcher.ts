// Gathers the store calls made within a few microtask hops of each other
// into one batch, so that they can go out as one getMany() or setMany().

/** How many hops in a row that add nothing close a batch. */
const QUIET_HOPS = 2;
/**
 * How many microtask hops a batch waits, at most, for callers that reach
 * the store a few awaits after the first one.
 */
const MAX_HOPS = 16;

/**
 * Sends store calls as they come, gathering those made in the same turn of
 * the event loop into one batch.  The first call of a turn goes out at
 * once, on its own (so a lone call costs nothing: no wait, no promise of
 * ours); the calls made while its turn lasts are gathered and go out
 * together when it ends, right behind it.  A turn ends after two
 * microtask hops in a row with no call (or after `MAX_HOPS` hops), never
 * after a timer or I/O: the work a queue starts together (the handlers of
 * one claimed batch, the slots a parallel queue fills, the runs whose
 * previous tasks finished on one reply) reaches the store within a few
 * hops of the first call.  So N calls in a turn cost two store calls sent
 * back to back, in flight together: one round trip of waiting.  Internal.
 * @since 0.3.0
 */
export class MicrotaskBatcher<T> {
  readonly #flush: (items: T[]) => Promise<void>;
  /** Whether a turn is open: a call was sent and the hops go on. */
  #open = false;
  /** The calls gathered in the open turn, and what settles them. */
  #batch: { items: T[]; settled: Promise<void>; settle: (p: Promise<void>) => void } | undefined;

  /**
   * @param flush Sends a batch, never empty: one item alone, or the items
   *              gathered in a turn.  What it returns settles their
   *              `push()`es; it may throw.
   */
  constructor(flush: (items: T[]) => Promise<void>) {
    this.#flush = flush;
  }

  /**
   * Sends an item at once when it is the first of its turn, or gathers it
   * with the others of the turn.
   * @param item The item.
   * @returns Settles as the item's call does (one promise for a whole
   *          batch, not one per item).
   */
  push(item: T): Promise<void> {
    if (!this.#open) {
      this.#open = true;
      this.#wait(0, 0, 1);
      return this.#send([item]);
    }
    let batch = this.#batch;
    if (batch == null) {
      let settle!: (p: Promise<void>) => void;
      const settled = new Promise<void>((resolve) => settle = resolve);
      batch = this.#batch = { items: [], settled, settle };
    }
    batch.items.push(item);
    return batch.settled;
  }

  #send(items: T[]): Promise<void> {
    try {
      return this.#flush(items);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @param seen How many items were gathered when this hop was scheduled.
   * @param quiet How many hops in a row gathered nothing before this one.
   * @param hops How many hops the turn has lasted, this one included.
   */
  #wait(seen: number, quiet: number, hops: number): void {
    queueMicrotask(() => {
      const gathered = this.#batch?.items.length ?? 0;
      const stillQuiet = gathered > seen ? 0 : quiet + 1;
      if (stillQuiet < QUIET_HOPS && hops < MAX_HOPS) {
        this.#wait(gathered, stillQuiet, hops + 1);
        return;
      }
      const batch = this.#batch;
      this.#batch = undefined;
      this.#open = false;
      if (batch != null) batch.settle(this.#send(batch.items));
    });
  }
}
