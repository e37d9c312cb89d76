/**
 * What a `handleMany` handler puts in its returned array for an item that
 * failed: that item alone fails (its retry policy decides whether it is
 * retried; a `PermanentError` fails it for good), while the others
 * complete.
 * @example
 * ```ts
 * import { TaskItemFailure } from "@fedwork/core";
 *
 * declare const items: readonly { readonly data: string }[];
 * declare function send(text: string): Promise<boolean>;
 *
 * const outcomes = await Promise.all(items.map(async (item) =>
 *   await send(item.data) ? undefined : new TaskItemFailure(new Error("not sent"))
 * ));
 * ```
 * @since 0.4.0
 */
export class TaskItemFailure {
  /** The item's error: what its attempt failed with. */
  readonly error: unknown;

  /**
   * @param error What the item's attempt failed with.
   */
  constructor(error: unknown) {
    this.error = error;
  }
}
