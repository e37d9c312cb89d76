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
 * Gathers the store calls made in the same turn of the event loop behind
 * the first one.  The first call of a turn goes out at once, sent by its
 * caller (`first()` says which call that is), so a lone call costs nothing
 * more than it did; the calls made while its turn lasts are gathered
 * (`push()`) and go out together when it ends, right behind it.  A turn
 * ends after two microtask hops in a row with no call (or after
 * `MAX_HOPS` hops), never after a timer or I/O: the work a queue starts
 * together (the handlers of one claimed batch, the slots a parallel queue
 * fills, the runs whose previous tasks finished on one reply) reaches the
 * store within a few hops of the first call.  So N calls in a turn cost
 * two store calls sent back to back, in flight together: one round trip
 * of waiting.  Internal.
 * @example
 * ```ts ignore
 * if (batcher.first()) return kv.get(key);
 * return batcher.push(key); // settles once the batch's getMany() has
 * ```
 * @since 0.3.0
 */
export class MicrotaskBatcher<T> {
  readonly #flush: (items: T[]) => Promise<void>;
  /** Whether a turn is open: its first call was sent and the hops go on. */
  #open = false;
  /** The calls gathered in the open turn, and what settles them. */
  #batch: { items: T[]; settled: Promise<void>; settle: (p: Promise<void>) => void } | undefined;
  /** How many items were gathered when the pending hop was scheduled. */
  #seen = 0;
  /** How many hops in a row gathered nothing before the pending one. */
  #quiet = 0;
  /** How many hops the open turn has lasted. */
  #hops = 0;
  /** The hop, made once: no closure per hop. */
  readonly #hop = () => this.#onHop();

  /**
   * @param flush Sends the items gathered in a turn, never empty; what it
   *              returns settles their `push()`es; it may throw.
   */
  constructor(flush: (items: T[]) => Promise<void>) {
    this.#flush = flush;
  }

  /**
   * Opens a turn when none is open.
   * @returns `true` when the caller's call is the first of its turn: the
   *          caller sends it at once, itself.  `false`: `push()` it.
   */
  first(): boolean {
    if (this.#open) return false;
    this.#open = true;
    this.#seen = this.#quiet = 0;
    this.#hops = 1;
    queueMicrotask(this.#hop);
    return true;
  }

  /**
   * Gathers an item with the others of the open turn (opening one when
   * none is, whose first call it then is not).
   * @param item The item.
   * @returns Settles as the batch's flush does: one promise for the whole
   *          batch, not one per item.
   */
  push(item: T): Promise<void> {
    this.first();
    let batch = this.#batch;
    if (batch == null) {
      let settle!: (p: Promise<void>) => void;
      const settled = new Promise<void>((resolve) => settle = resolve);
      batch = this.#batch = { items: [], settled, settle };
    }
    batch.items.push(item);
    return batch.settled;
  }

  #onHop(): void {
    const gathered = this.#batch?.items.length ?? 0;
    this.#quiet = gathered > this.#seen ? 0 : this.#quiet + 1;
    this.#seen = gathered;
    if (this.#quiet < QUIET_HOPS && this.#hops < MAX_HOPS) {
      this.#hops++;
      queueMicrotask(this.#hop);
      return;
    }
    const batch = this.#batch;
    this.#batch = undefined;
    this.#open = false;
    if (batch == null) return;
    let flushed: Promise<void>;
    try {
      flushed = this.#flush(batch.items);
    } catch (error) {
      flushed = Promise.reject(error);
    }
    batch.settle(flushed);
  }
}
