/**
 * The limits the task codec enforces, on both sides: {@link encodeTaskPayload}
 * refuses a payload beyond them with a `TaskPayloadEncodingError`, and
 * {@link decodeTaskPayload} refuses a wire string beyond them with a
 * `TaskPayloadDecodingError`, before doing work proportional to the excess.
 * @since 0.2.0
 */
export interface TaskPayloadLimits {
  /**
   * How deeply containers (arrays, objects, maps, sets, and the JSON-LD
   * documents of Activity Vocabulary objects) may nest: `{ a: [1] }` is 2
   * levels deep.  256 by default.
   * @default 256
   */
  readonly maxDepth?: number;

  /**
   * The longest encoded payload, in UTF-16 code units (the `length` of the
   * wire string).  1 MiB (1,048,576) by default: keep large blobs out of
   * queue messages, store them elsewhere and carry a key.
   * @default 1048576
   */
  readonly maxSize?: number;
}

/**
 * The default {@link TaskPayloadLimits.maxDepth}.
 * @since 0.2.0
 */
export const DEFAULT_TASK_PAYLOAD_MAX_DEPTH = 256;

/**
 * The default {@link TaskPayloadLimits.maxSize}: 1 MiB.
 * @since 0.2.0
 */
export const DEFAULT_TASK_PAYLOAD_MAX_SIZE = 1_048_576;

/**
 * How many decimal digits the `bigint` values of one payload may have
 * together.  Not an option: converting between a `bigint` and its decimal
 * text takes time quadratic in its length, so this bounds the work a
 * hostile message can cause (10,000 digits take well under a millisecond)
 * rather than the data an application may carry.
 */
export const MAX_BIGINT_DIGITS = 10_000;

/** The limits with their defaults filled in. */
export interface ResolvedLimits {
  readonly maxDepth: number;
  readonly maxSize: number;
}

const defaultLimits: ResolvedLimits = {
  maxDepth: DEFAULT_TASK_PAYLOAD_MAX_DEPTH,
  maxSize: DEFAULT_TASK_PAYLOAD_MAX_SIZE,
};

/**
 * Fills in the defaults and checks the given limits.
 * @throws {RangeError} When a limit is not a positive integer.
 */
export function resolveLimits(limits: TaskPayloadLimits | undefined): ResolvedLimits {
  if (limits == null || (limits.maxDepth == null && limits.maxSize == null)) {
    return defaultLimits;
  }
  const maxDepth = limits.maxDepth ?? DEFAULT_TASK_PAYLOAD_MAX_DEPTH;
  const maxSize = limits.maxSize ?? DEFAULT_TASK_PAYLOAD_MAX_SIZE;
  for (const [name, value] of [["maxDepth", maxDepth], ["maxSize", maxSize]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`The ${name} limit must be a positive integer; got ${String(value)}.`);
    }
  }
  return { maxDepth, maxSize };
}
