import {
  type DurationInput,
  durationToMilliseconds,
  millisecondsToDuration,
} from "../time/duration.ts";
import { assertKnownOptions } from "../options/known-options.ts";
import type { RetryPolicy } from "./retry-policy.ts";

/**
 * Options for {@link createExponentialBackoffPolicy}.
 * @since 0.1.0
 */
export interface ExponentialBackoffPolicyOptions {
  /**
   * The delay before the first retry.  1 second by default.
   */
  readonly initialDelay?: DurationInput;

  /**
   * The longest delay between two attempts.  12 hours by default.  Must not
   * be shorter than `initialDelay`.
   */
  readonly maxDelay?: DurationInput;

  /**
   * How many attempts may fail before the policy gives up; a positive
   * integer.  10 by default.
   */
  readonly maxAttempts?: number;

  /**
   * What each delay is multiplied by to get the next one; at least 1.
   * 2 by default.
   */
  readonly factor?: number;

  /**
   * Whether to randomize each delay (by up to ±50 %, never beyond
   * `maxDelay`), so that many messages that failed together do not all
   * retry at the same moment.  `true` by default.
   */
  readonly jitter?: boolean;
}

/**
 * Creates a retry policy whose delays grow exponentially: the delay after
 * the *n*-th failed attempt is `initialDelay × factor^(n−1)`, capped at
 * `maxDelay`, optionally with jitter.  The policy gives up (returns `null`)
 * once `maxAttempts` attempts have failed.
 *
 * @example
 * ```ts
 * import { createExponentialBackoffPolicy } from "@fedwork/core";
 *
 * const policy = createExponentialBackoffPolicy({
 *   initialDelay: { seconds: 5 },
 *   maxAttempts: 5,
 *   jitter: false,
 * });
 * ```
 * @param options The delays, the attempt limit, the growth factor and
 *                whether to add jitter.
 * @returns The retry policy.
 * @throws {UnknownOptionError} When `options` holds a name it does not
 *         know (a typo such as `maxAttemps`).
 * @throws {TypeError} When a duration option is not a duration, or a
 *                     number option is not a number.
 * @throws {RangeError} When a delay is negative, `maxDelay` is shorter than
 *                      `initialDelay`, `maxAttempts` is not a positive
 *                      integer or `factor` is less than 1.
 * @since 0.1.0
 */
export function createExponentialBackoffPolicy(
  options: ExponentialBackoffPolicyOptions = {},
): RetryPolicy {
  assertKnownOptions(
    options,
    ["initialDelay", "maxDelay", "maxAttempts", "factor", "jitter"],
    { where: "createExponentialBackoffPolicy()" },
  );
  const initialDelay = durationToMilliseconds(
    options.initialDelay ?? { seconds: 1 },
    "initialDelay",
  );
  const maxDelay = durationToMilliseconds(options.maxDelay ?? { hours: 12 }, "maxDelay");
  const maxAttempts = options.maxAttempts ?? 10;
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? true;
  if (typeof maxAttempts !== "number") {
    throw new TypeError(`The maxAttempts option must be a number; got ${typeof maxAttempts}.`);
  }
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError(`The maxAttempts option must be a positive integer; got ${maxAttempts}.`);
  }
  if (typeof factor !== "number") {
    throw new TypeError(`The factor option must be a number; got ${typeof factor}.`);
  }
  if (!(factor >= 1) || !Number.isFinite(factor)) {
    throw new RangeError(`The factor option must be a finite number of at least 1; got ${factor}.`);
  }
  if (maxDelay < initialDelay) {
    throw new RangeError(
      `The maxDelay option (${maxDelay} ms) must not be shorter than the initialDelay ` +
        `option (${initialDelay} ms).`,
    );
  }
  return ({ attempts }) => {
    if (attempts >= maxAttempts) return null;
    // attempts counts failures so far, so the first retry (attempts = 1)
    // waits initialDelay.  Math.pow may overflow to Infinity, which the cap
    // turns back into maxDelay (0 × Infinity would be NaN, hence the guard).
    const exponent = Math.max(0, attempts - 1);
    const grown = initialDelay === 0 ? 0 : initialDelay * Math.pow(factor, exponent);
    let delay = Math.min(grown, maxDelay);
    if (jitter) {
      delay = Math.min(delay * (0.5 + Math.random()), maxDelay);
    }
    return millisecondsToDuration(delay);
  };
}
