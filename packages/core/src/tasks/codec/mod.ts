/**
 * The task codec: turns a task payload into the string a `TaskMessage`
 * carries and back, refusing what cannot travel and what a hostile message
 * could use to stall or crash a worker.
 * @module
 */
import type { DocumentLoader } from "@fedify/vocab";
import { decodePayload } from "./decode.ts";
import { encodePayload } from "./encode.ts";
import { resolveLimits, type TaskPayloadLimits } from "./limits.ts";

export {
  DEFAULT_TASK_PAYLOAD_MAX_DEPTH,
  DEFAULT_TASK_PAYLOAD_MAX_SIZE,
  type TaskPayloadLimits,
} from "./limits.ts";

/**
 * What {@link encodeTaskPayload} may be told.
 * @since 0.2.0
 */
export interface EncodeTaskPayloadOptions extends TaskPayloadLimits {}

/**
 * What {@link decodeTaskPayload} needs to rebuild Activity Vocabulary
 * objects from their JSON-LD, and the limits it enforces.
 * @since 0.1.0
 */
export interface DecodeTaskPayloadOptions extends TaskPayloadLimits {
  /** Loads remote JSON-LD documents that vocabulary objects refer to. */
  readonly documentLoader: DocumentLoader;
  /** Loads JSON-LD contexts; `documentLoader` by default. */
  readonly contextLoader?: DocumentLoader;
}

/**
 * Encodes a task payload into the string a `TaskMessage` carries.
 *
 * The payload may hold JSON values, `undefined`, `NaN`, `-0`, `Infinity`,
 * `bigint`, `Date`, `RegExp`, `URL`, `URLSearchParams`, `Map`, `Set`, typed
 * arrays, `ArrayBuffer`, boxed primitives, Temporal objects (decoded as
 * `@js-temporal/polyfill` instances), shared and cyclic references, and
 * Activity Vocabulary objects (`Note`, `Create`, …), which travel as JSON-LD.
 * The string is in devalue's format.
 *
 * Refused, with the path of the offending value: functions, symbols (as
 * values or as keys), promises and other thenables (never awaited, their
 * `then()` never called), instances of other classes, own `__proto__` keys,
 * nesting deeper than `maxDepth`, and an encoded payload longer than
 * `maxSize`.  A getter or proxy trap that throws is reported the same way.
 * The work is proportional to the values present: the holes of a sparse
 * array cost nothing.
 *
 * @example
 * ```ts
 * const text = await encodeTaskPayload({ at: new Date(), tags: new Set(["a"]) });
 * ```
 * @param value The payload.
 * @param options The limits; the defaults are 256 levels and 1 MiB.
 * @returns The encoded payload.
 * @throws {TaskPayloadEncodingError} (as a rejection) When the payload
 *         holds a value the codec cannot carry or exceeds a limit; the error
 *         names its path.
 * @throws {RangeError} When a limit is not a positive integer.
 * @since 0.1.0
 */
export async function encodeTaskPayload(
  value: unknown,
  options?: EncodeTaskPayloadOptions,
): Promise<string> {
  return await encodePayload(value, resolveLimits(options), new Map());
}

/**
 * Encodes several payloads, as `enqueueTaskMany()` does: like
 * {@link encodeTaskPayload} on each, except that a vocabulary object shared
 * by several payloads is turned into JSON-LD once, and that the strings are
 * returned at once (not as a promise) when no payload holds a vocabulary
 * object, so that the common case costs no promise.  Internal.
 * @param values The payloads.
 * @param options The limits.
 * @returns The encoded payloads, in order, or a promise of them.
 * @throws {TaskPayloadEncodingError} When a payload cannot be encoded
 *         (thrown, or as a rejection once vocabulary objects are involved).
 * @throws {RangeError} When a limit is not a positive integer.
 * @since 0.2.0
 */
export function encodeTaskPayloads(
  values: readonly unknown[],
  options?: EncodeTaskPayloadOptions,
): string[] | Promise<string[]> {
  const limits = resolveLimits(options);
  const jsonLdCache = new Map<object, Promise<unknown>>();
  const encoded: (string | Promise<string>)[] = new Array(values.length);
  let pending = false;
  for (let i = 0; i < values.length; i++) {
    const text = encodePayload(values[i], limits, jsonLdCache);
    pending ||= typeof text !== "string";
    encoded[i] = text;
  }
  return pending ? Promise.all(encoded) : encoded as string[];
}

/**
 * Decodes a string written by {@link encodeTaskPayload} (or by Fedwork
 * 0.1.0), rebuilding Activity Vocabulary objects as instances of their
 * classes.
 *
 * Safe on hostile input: the work is proportional to the string (a sparse
 * array costs its present elements, not its length; every entry is rebuilt
 * once), nesting is bounded by `maxDepth` and the string by `maxSize`,
 * `__proto__` keys are refused, and nothing outside the payload is touched.
 *
 * @example
 * ```ts
 * import { getDocumentLoader } from "@fedify/vocab-runtime";
 *
 * const payload = await decodeTaskPayload(text, { documentLoader: getDocumentLoader() });
 * ```
 * @param text The encoded payload.
 * @param options The document loader (and context loader) vocabulary
 *                objects are rebuilt with, and the limits.
 * @returns The payload.
 * @throws {TaskPayloadDecodingError} (as a rejection) When the text is not
 *         an encoded payload, exceeds a limit, or holds a vocabulary object
 *         that cannot be rebuilt from its JSON-LD.  Retrying cannot help.
 * @throws {TaskPayloadLoadError} (as a rejection) When the document loader
 *         or context loader failed while rebuilding a vocabulary object.
 *         Retrying may help.
 * @throws {RangeError} When a limit is not a positive integer.
 * @since 0.1.0
 */
export async function decodeTaskPayload(
  text: string,
  options: DecodeTaskPayloadOptions,
): Promise<unknown> {
  return await decodePayload(text, resolveLimits(options), {
    documentLoader: options.documentLoader,
    contextLoader: options.contextLoader ?? options.documentLoader,
  });
}
