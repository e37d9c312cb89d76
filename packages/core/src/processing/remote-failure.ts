// Whose failure an error is: a remote party's (a server that answered 500,
// timed out, sent a bad document, or could not be reached) is logged with
// its message alone; anything else may be a bug here and keeps its stack.
// A mark on the error rather than a class test, so that this layer need
// not know the classes of activitypub/ and operator/ that describe remote
// parties.

const REMOTE_FAILURE: unique symbol = Symbol.for("fedwork.remoteFailure");

/** How deep {@link isRemoteFailure} follows `cause`. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Marks every instance of an error class as a remote party's failure.
 * Internal: the classes that describe remote parties call it once.
 * @param errorClass The class.
 * @since 0.4.0
 */
export function markRemoteFailureClass(errorClass: abstract new (...args: never[]) => Error): void {
  Object.defineProperty(errorClass.prototype, REMOTE_FAILURE, { value: true });
}

/**
 * Marks one error as a remote party's failure (a network error from
 * `fetch()`, whose class, `TypeError`, says nothing of whose it is).
 * Internal.
 * @param error The error.
 * @returns The same error.
 * @since 0.4.0
 */
export function markRemoteFailure<T>(error: T): T {
  if (typeof error === "object" && error != null && Object.isExtensible(error)) {
    Object.defineProperty(error, REMOTE_FAILURE, { value: true, configurable: true });
  }
  return error;
}

/**
 * Whether an error, or one of its causes, is a remote party's failure.
 * Internal.
 * @param error Anything thrown.
 * @returns Whether it is marked so.
 * @since 0.4.0
 */
export function isRemoteFailure(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
    if (typeof current !== "object" || current == null) return false;
    if ((current as { [REMOTE_FAILURE]?: unknown })[REMOTE_FAILURE] === true) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * What a log record keeps of an error: a remote party's failure as its
 * name and message (no stack: it is not a bug here), anything else as it
 * is (its stack shows where it came from).  Internal.
 * @param error Anything thrown.
 * @returns The error, or `"Name: message"`.
 * @since 0.4.0
 */
export function loggedError(error: unknown): unknown {
  if (!isRemoteFailure(error)) return error;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
