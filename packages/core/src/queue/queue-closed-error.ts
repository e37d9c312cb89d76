/**
 * Thrown when a message queue (or a store sharing its connection) is used
 * after it was closed with `[Symbol.asyncDispose]()`.  Fedwork's backends
 * throw subclasses of it (`SqliteClosedError`, `PostgresClosedError`, …),
 * so `error instanceof QueueClosedError` recognises all of them.  A lease
 * listener (see `@fedwork/core/queue-kit`) whose engine throws it stops as
 * if its signal had been aborted.
 * @since 0.2.0
 */
export class QueueClosedError extends Error {
  /**
   * Creates the error.
   * @param message What was closed and what to do instead.
   * @param options The cause, if any.
   * @since 0.2.0
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "QueueClosedError";
  }
}
