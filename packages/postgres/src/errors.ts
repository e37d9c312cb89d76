import { QueueClosedError } from "@fedwork/core";

/**
 * Thrown when a {@link PostgresMessageQueue} or {@link PostgresKvStore} is
 * used after it was disposed.  Create a new instance instead.  Extends
 * `QueueClosedError` from `@fedwork/core` since 0.2.0.
 * @since 0.1.0
 */
export class PostgresClosedError extends QueueClosedError {
  /**
   * Creates the error.
   * @param className The class of the disposed instance.
   * @since 0.1.0
   */
  constructor(className: string) {
    super(`This ${className} has been disposed; create a new instance to keep using PostgreSQL.`);
    this.name = "PostgresClosedError";
  }
}
