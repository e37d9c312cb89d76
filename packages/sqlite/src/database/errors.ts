import { QueueClosedError } from "@fedwork/core";

/**
 * Thrown when a Fedwork SQLite queue or store is used after it was closed
 * with `[Symbol.asyncDispose]()`.
 *
 * Extends `QueueClosedError` from `@fedwork/core` since 0.2.0.
 * @since 0.1.0
 */
export class SqliteClosedError extends QueueClosedError {
  /**
   * @param className The closed object's class, e.g. `"SqliteMessageQueue"`.
   */
  constructor(className: string) {
    super(
      `This ${className} is closed (its [Symbol.asyncDispose]() was called); ` +
        `create a new ${className} to keep using the database.`,
    );
    this.name = "SqliteClosedError";
  }
}
