// The two ways a command fails, each with its exit code: the operator asked
// for something wrong (2), or what was asked for is not there or did not
// work (1).

/** The exit code of a command that did what it was asked. */
export const EXIT_OK = 0;
/** The exit code when the thing named is not there or the operation failed. */
export const EXIT_FAILURE = 1;
/** The exit code of a malformed command line. */
export const EXIT_USAGE = 2;

/**
 * A malformed command line: an unknown command or option, a missing
 * argument, no `--app`, a module without a federation.  Exits with 2.
 */
export class CliUsageError extends Error {
  /**
   * @param message One line naming what was wrong and how to fix it.
   */
  constructor(message: string) {
    super(message);
    this.name = "CliUsageError";
  }
}

/**
 * The thing a command names is not there, or the operation failed.  Exits
 * with 1.
 */
export class CliFailure extends Error {
  /**
   * @param message One line saying what failed.
   */
  constructor(message: string) {
    super(message);
    this.name = "CliFailure";
  }
}
