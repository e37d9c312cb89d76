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

/**
 * Runs the check of one federation option (one of the value checks of
 * `options/`, so that every option is worded alike) and rethrows its
 * error as a {@link FederationOptionError} naming the option.
 * @param option The option's name, e.g. `"webhooks.timeout"`.
 * @param check The check.
 * @returns What the check returns.
 * @throws {FederationOptionError} When the check throws.
 * @since 0.3.0
 */
export function checkFederationOption<T>(option: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof FederationOptionError) throw error;
    throw new FederationOptionError(option, (error as Error).message);
  }
}
