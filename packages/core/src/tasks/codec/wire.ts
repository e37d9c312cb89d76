// The wire format is devalue's (https://github.com/sveltejs/devalue), so
// that messages written by Fedwork 0.1.0, which used devalue itself, still
// decode, and messages written now decode on 0.1.0 workers during a
// rolling deployment.  A payload is a JSON array of entries; entry 0 is the
// root.  A container entry refers to its members by entry index, or by one
// of the negative numbers below.  Typed values are arrays that start with a
// tag: ["Date", "2024-…"], ["Map", k, v, …], ["fedwork.vocab", i], ….

/** A reference to `undefined`. */
export const UNDEFINED = -1;
/** A hole in an array entry. */
export const HOLE = -2;
/** A reference to `NaN`. */
export const NAN = -3;
/** A reference to `Infinity`. */
export const POSITIVE_INFINITY = -4;
/** A reference to `-Infinity`. */
export const NEGATIVE_INFINITY = -5;
/** A reference to `-0`. */
export const NEGATIVE_ZERO = -6;
/** Starts a sparse array entry: [SPARSE, length, index, ref, index, ref, …]. */
export const SPARSE = -7;

/** The largest valid array length, and so the largest index plus one. */
export const MAX_ARRAY_LENGTH = 2 ** 32 - 1;

/** Tags an Activity Vocabulary object: ["fedwork.vocab", pair], pair = [className, jsonLd]. */
export const VOCABULARY_TAG = "fedwork.vocab";
/** Tags a Temporal object: ["fedwork.temporal", pair], pair = [type, text]. */
export const TEMPORAL_TAG = "fedwork.temporal";

/** The typed array classes the format knows, by tag. */
export const TYPED_ARRAY_TAGS: ReadonlySet<string> = new Set([
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Float16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
]);
