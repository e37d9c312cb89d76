import { QueueClosedError } from "@fedwork/core";

/**
 * Thrown when a Fedwork Deno KV queue or store is used after it was closed
 * with `[Symbol.asyncDispose]()`.
 * @since 0.3.0
 */
export class DenoKvClosedError extends QueueClosedError {
  /**
   * @param className The closed object's class, e.g. `"DenoKvMessageQueue"`.
   */
  constructor(className: string) {
    super(
      `This ${className} is closed (its [Symbol.asyncDispose]() was called); ` +
        `create a new ${className} to keep using the database.`,
    );
    this.name = "DenoKvClosedError";
  }
}
