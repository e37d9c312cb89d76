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
 * Collects items pushed in the same turn of the event loop and hands them
 * to `flush` together.  The batch closes after two microtask hops in a row
 * that added nothing (or after `MAX_HOPS` hops), never after a timer or
 * I/O: work that
 * a queue starts together (the handlers of one claimed batch, the slots a
 * parallel queue fills, the runs whose previous tasks finished on one
 * reply) reaches the store within a few hops of the first call, so it is
 * caught, and a lone call waits two hops.  Internal.
 * @since 0.3.0
 */
export class MicrotaskBatcher<T> {
  readonly #flush: (items: T[]) => void;
  #items: T[] | undefined;

  /**
   * @param flush Receives each batch, never empty; must not throw.
   */
  constructor(flush: (items: T[]) => void) {
    this.#flush = flush;
  }

  /**
   * Adds an item to the open batch, opening one when there is none.
   * @param item The item.
   */
  push(item: T): void {
    let items = this.#items;
    if (items == null) {
      items = this.#items = [];
      this.#wait(items, 1, 0, 1);
    }
    items.push(item);
  }

  /**
   * @param items The open batch.
   * @param seen How many items it held when this hop was scheduled.
   * @param quiet How many hops in a row added nothing before this one.
   * @param hops How many hops it has waited, this one included.
   */
  #wait(items: T[], seen: number, quiet: number, hops: number): void {
    queueMicrotask(() => {
      const stillQuiet = items.length > seen ? 0 : quiet + 1;
      if (stillQuiet < QUIET_HOPS && hops < MAX_HOPS) {
        this.#wait(items, items.length, stillQuiet, hops + 1);
        return;
      }
      this.#items = undefined;
      this.#flush(items);
    });
  }
}
