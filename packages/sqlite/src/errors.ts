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

/**
 * Thrown when a table name option is not a plain SQL identifier.
 * @since 0.1.0
 */
export class SqliteIdentifierError extends TypeError {
  /**
   * @param optionName The option that held the name, e.g. `"tableName"`.
   * @param value The rejected value.
   */
  constructor(optionName: string, value: unknown) {
    super(
      `The ${optionName} option must be a SQL identifier of letters, digits and underscores ` +
        `that does not start with a digit (at most 63 characters); got ${JSON.stringify(value)}.`,
    );
    this.name = "SqliteIdentifierError";
  }
}
