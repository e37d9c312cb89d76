// What is running right now, in a form that costs nothing to keep: every
// message of every worker is added when it starts and removed when it ends.

/**
 * The handle of an item in an {@link InFlightList}: what `remove()` takes.
 * Internal.
 * @since 0.3.0
 */
export interface InFlightHandle<T> {
  /** The item. */
  readonly value: T;
  /** Its place in the list (the list moves it), or -1 once removed. */
  index: number;
}

/**
 * An unordered list of the items in flight, added and removed in constant
 * time without hashing: an array with swap removal, each item knowing its
 * place.  Not a map keyed by message id or by a fresh object: such maps,
 * with an entry set and deleted for every message, rehash every few
 * messages (V8 keeps the deleted entries until it rebuilds the table), and
 * a fresh object key costs an identity hash.  Internal.
 * @example
 * ```ts ignore
 * const handle = running.add(messageId);
 * try { await run(); } finally { running.remove(handle); }
 * ```
 * @since 0.3.0
 */
export class InFlightList<T> {
  readonly #items: InFlightHandle<T>[] = [];

  /**
   * Adds an item.
   * @param value The item; the same item may be added more than once.
   * @returns Its handle, for `remove()`.
   */
  add(value: T): InFlightHandle<T> {
    const handle: InFlightHandle<T> = { value, index: this.#items.length };
    this.#items.push(handle);
    return handle;
  }

  /**
   * Removes an item; removing it again does nothing.
   * @param handle Its handle, as `add()` returned it.
   */
  remove(handle: InFlightHandle<T>): void {
    const { index } = handle;
    if (index < 0) return;
    handle.index = -1;
    const items = this.#items;
    const last = items.pop()!;
    if (last === handle) return;
    items[index] = last;
    last.index = index;
  }

  /** How many items are in flight. */
  get size(): number {
    return this.#items.length;
  }

  /** The items in flight, in no particular order. */
  values(): T[] {
    return this.#items.map((handle) => handle.value);
  }
}
