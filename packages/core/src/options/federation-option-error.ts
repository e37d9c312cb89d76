/**
 * Thrown by `createFederation()` and `FederationBuilder.build()` when an
 * option is missing or invalid.  The message names the option.
 * @since 0.1.0
 */
export class FederationOptionError extends TypeError {
  /** The name of the offending option, e.g. `"queue.outbox"`. */
  readonly option: string;

  /**
   * @param option The option's name.
   * @param message What is wrong and how to fix it.
   */
  constructor(option: string, message: string) {
    super(message);
    this.name = "FederationOptionError";
    this.option = option;
  }
}
