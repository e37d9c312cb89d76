import { TaskPayloadDecodingError } from "../errors.ts";
import { decodeBase64, reviveTemporal } from "./builtins.ts";
import { MAX_BIGINT_DIGITS, type ResolvedLimits } from "./limits.ts";
import { type Loaders, Placeholders, VocabularyPlaceholder } from "./placeholders.ts";
import { vocabularyClass } from "./vocabulary.ts";
import {
  HOLE,
  MAX_ARRAY_LENGTH,
  NAN,
  NEGATIVE_INFINITY,
  NEGATIVE_ZERO,
  POSITIVE_INFINITY,
  SPARSE,
  TEMPORAL_TAG,
  TYPED_ARRAY_TAGS,
  UNDEFINED,
  VOCABULARY_TAG,
} from "./wire.ts";

function invalid(reason: string, cause?: unknown): never {
  throw new TaskPayloadDecodingError(reason, cause === undefined ? undefined : { cause });
}

// The state of each entry: 0 until it is rebuilt, BUSY while its members
// are, then DONE.  An entry rebuilt inside JSON-LD (DONE_JSON) is plain
// JSON; JSON-LD may refer only to such entries, so a typed value, a
// vocabulary object or a cycle never reaches fromJsonLd().
const BUSY = 1;
const DONE = 2;
const DONE_JSON = 3;

/**
 * Rebuilds a payload from devalue's format, synchronously, with work
 * proportional to the wire string: every entry is rebuilt at most once,
 * a sparse array costs its present elements, not its length, and nesting
 * is bounded by maxDepth before the stack is.
 */
class Decoder {
  /**
   * The vocabulary objects to rebuild, made when the first one is found:
   * most payloads hold none, and a decoder is made on every task run.
   */
  found: Placeholders | undefined;
  readonly #values: unknown[];
  readonly #hydrated: unknown[];
  readonly #state: Uint8Array;
  readonly #maxDepth: number;
  #bigIntDigits = 0;

  constructor(values: unknown[], limits: ResolvedLimits) {
    this.#values = values;
    this.#hydrated = new Array(values.length);
    this.#state = new Uint8Array(values.length);
    this.#maxDepth = limits.maxDepth;
  }

  #placeholders(): Placeholders {
    return this.found ??= new Placeholders();
  }

  /**
   * Resolves a reference.
   * @param ref The reference: an entry index or a negative constant.
   * @param depth How many containers enclose the value.
   * @param json Whether the value is inside JSON-LD.
   */
  ref(ref: unknown, depth: number, json: boolean): unknown {
    if (typeof ref !== "number") invalid("a reference is not a number.");
    if (ref < 0) {
      // JSON-LD is JSON: none of these, and no holes, which jsonld.expand()
      // would walk one by one.  -0 is let through, as JSON.parse() makes it.
      if (json && ref !== NEGATIVE_ZERO) invalid("JSON-LD holds a value JSON cannot.");
      switch (ref) {
        case UNDEFINED:
          return undefined;
        case NAN:
          return NaN;
        case POSITIVE_INFINITY:
          return Infinity;
        case NEGATIVE_INFINITY:
          return -Infinity;
        case NEGATIVE_ZERO:
          return -0;
        default:
          invalid(`${ref} is not a valid reference.`);
      }
    }
    if (!Number.isInteger(ref) || ref >= this.#values.length) {
      invalid(`the reference ${ref} is out of range.`);
    }
    const state = this.#state[ref];
    if (state === DONE_JSON) return this.#hydrated[ref];
    if (state === DONE) {
      if (json) invalid("JSON-LD refers to a value outside it.");
      return this.#hydrated[ref];
    }
    if (state === BUSY) invalid("an entry refers to itself.");
    const raw = this.#values[ref];
    if (raw === null || typeof raw !== "object") {
      this.#hydrated[ref] = raw;
      this.#state[ref] = DONE_JSON;
      return raw;
    }
    if (!Array.isArray(raw)) return this.#object(ref, raw, depth + 1, json);
    const head = raw[0];
    if (typeof head === "string") {
      if (json) invalid(`JSON-LD holds a value of type ${JSON.stringify(head)}.`);
      return this.#tagged(ref, raw, head, depth);
    }
    if (head === SPARSE) {
      if (json) invalid("JSON-LD holds a sparse array.");
      return this.#sparseArray(ref, raw, depth + 1, json);
    }
    return this.#array(ref, raw, depth + 1, json);
  }

  #enter(index: number, value: unknown, depth: number, json: boolean): void {
    if (depth > this.#maxDepth) {
      invalid(`it nests deeper than ${this.#maxDepth} levels (maxDepth).`);
    }
    this.#hydrated[index] = value;
    // A container outside JSON-LD is usable (partly filled) by its own
    // members, which is how cycles come back; inside JSON-LD it is not.
    this.#state[index] = json ? BUSY : DONE;
  }

  #leave(index: number, json: boolean): void {
    if (json) this.#state[index] = DONE_JSON;
  }

  #done(index: number, value: unknown): unknown {
    this.#hydrated[index] = value;
    this.#state[index] = DONE;
    return value;
  }

  #object(index: number, raw: object, depth: number, json: boolean): unknown {
    const object: Record<string, unknown> = {};
    this.#enter(index, object, depth, json);
    for (const key of Object.keys(raw)) {
      // JSON.parse() makes "__proto__" an own key; assigning it would set
      // the prototype instead.
      if (key === "__proto__") invalid("an object has a __proto__ key.");
      const value = this.ref((raw as Record<string, unknown>)[key], depth, json);
      object[key] = value;
      if (value instanceof VocabularyPlaceholder) this.#placeholders().placedAt(object, key);
    }
    this.#leave(index, json);
    return object;
  }

  #array(index: number, raw: unknown[], depth: number, json: boolean): unknown {
    const length = raw.length;
    const array: unknown[] = new Array(length);
    this.#enter(index, array, depth, json);
    for (let i = 0; i < length; i++) {
      const ref = raw[i];
      if (ref === HOLE) {
        if (json) invalid("JSON-LD holds an array with holes.");
        continue;
      }
      const value = this.ref(ref, depth, json);
      array[i] = value;
      if (value instanceof VocabularyPlaceholder) this.#placeholders().placedAt(array, i);
    }
    this.#leave(index, json);
    return array;
  }

  #sparseArray(index: number, raw: unknown[], depth: number, json: boolean): unknown {
    const length = raw[1];
    if (
      typeof length !== "number" || !Number.isInteger(length) || length < 0 ||
      length > MAX_ARRAY_LENGTH || raw.length % 2 !== 0
    ) {
      invalid("a sparse array entry is malformed.");
    }
    let array: unknown[];
    if (length <= 4 * raw.length + 16) {
      array = new Array(length);
    } else {
      // Setting a large length on an array may make the engine allocate
      // storage for it; touching the largest index first puts the array in
      // dictionary mode, where the length is just a number.
      array = [];
      array[MAX_ARRAY_LENGTH - 1] = undefined;
      delete array[MAX_ARRAY_LENGTH - 1];
      array.length = length;
    }
    this.#enter(index, array, depth, json);
    for (let i = 2; i < raw.length; i += 2) {
      const at = raw[i];
      if (typeof at !== "number" || !Number.isInteger(at) || at < 0 || at >= length) {
        invalid("a sparse array entry has an invalid index.");
      }
      const value = this.ref(raw[i + 1], depth, json);
      array[at] = value;
      if (value instanceof VocabularyPlaceholder) this.#placeholders().placedAt(array, at);
    }
    this.#leave(index, json);
    return array;
  }

  #tagged(index: number, raw: unknown[], tag: string, depth: number): unknown {
    switch (tag) {
      case "Date":
        return this.#done(index, new Date(stringAt(raw, 1, tag)));
      case "RegExp":
        return this.#done(index, regExpFrom(raw));
      case "URL":
        return this.#done(index, urlFrom(raw));
      case "URLSearchParams":
        return this.#done(index, new URLSearchParams(stringAt(raw, 1, tag)));
      case "BigInt":
        return this.#done(index, this.#bigInt(stringAt(raw, 1, tag)));
      case "Object":
        return this.#boxed(index, raw, depth);
      case "Set":
        return this.#set(index, raw, depth + 1);
      case "Map":
        return this.#map(index, raw, depth + 1);
      case "null":
        return this.#nullPrototypeObject(index, raw, depth + 1);
      case "ArrayBuffer":
        return this.#done(index, this.#arrayBuffer(raw));
      case VOCABULARY_TAG:
        return this.#vocabulary(index, raw, depth);
      case TEMPORAL_TAG: {
        this.#state[index] = BUSY;
        const pair = this.#pairAt(raw, depth);
        if (typeof pair[0] !== "string" || typeof pair[1] !== "string") {
          invalid("a Temporal entry is malformed.");
        }
        return this.#done(index, this.#temporal(pair[0], pair[1]));
      }
      default:
        if (TYPED_ARRAY_TAGS.has(tag) || tag === "DataView") return this.#view(index, raw, tag);
        // devalue 6 writes Temporal objects under their own tags.
        if (tag.startsWith("Temporal.")) {
          return this.#done(index, this.#temporal(tag, stringAt(raw, 1, tag)));
        }
        invalid(`unknown type ${JSON.stringify(tag)}.`);
    }
  }

  #bigInt(text: string): bigint {
    if (!/^-?\d+$/.test(text)) invalid("a BigInt entry is not an integer.");
    this.#bigIntDigits += text.length;
    if (this.#bigIntDigits > MAX_BIGINT_DIGITS + 1) {
      invalid(`its bigint values have more than ${MAX_BIGINT_DIGITS} digits together.`);
    }
    return BigInt(text);
  }

  #temporal(type: string, text: string): unknown {
    try {
      return reviveTemporal(type, text);
    } catch (error) {
      invalid(`an entry of type ${type} is not valid: ${(error as Error)?.message}`, error);
    }
  }

  #boxed(index: number, raw: unknown[], depth: number): unknown {
    const ref = raw[1];
    if (raw.length !== 2 || typeof ref !== "number") invalid("an Object entry is malformed.");
    // Only primitives can be boxed: a reference must lead to one.
    if (ref >= 0) {
      const target = this.#values[ref];
      if (
        target === undefined ||
        (typeof target === "object" &&
          !(Array.isArray(target) && target[0] === "BigInt"))
      ) {
        invalid("an Object entry does not box a primitive.");
      }
    } else if (ref === UNDEFINED) invalid("an Object entry boxes undefined.");
    this.#state[index] = BUSY;
    return this.#done(index, Object(this.ref(ref, depth, false)));
  }

  #set(index: number, raw: unknown[], depth: number): unknown {
    const set = new Set<unknown>();
    this.#enter(index, set, depth, false);
    for (let i = 1; i < raw.length; i++) {
      const member = this.ref(raw[i], depth, false);
      set.add(member);
      if (member instanceof VocabularyPlaceholder) this.#placeholders().placedIn(set);
    }
    return set;
  }

  #map(index: number, raw: unknown[], depth: number): unknown {
    if (raw.length % 2 !== 1) invalid("a Map entry is malformed.");
    const map = new Map<unknown, unknown>();
    this.#enter(index, map, depth, false);
    for (let i = 1; i < raw.length; i += 2) {
      const key = this.ref(raw[i], depth, false);
      const value = this.ref(raw[i + 1], depth, false);
      map.set(key, value);
      if (key instanceof VocabularyPlaceholder || value instanceof VocabularyPlaceholder) {
        this.#placeholders().placedIn(map);
      }
    }
    return map;
  }

  #nullPrototypeObject(index: number, raw: unknown[], depth: number): unknown {
    if (raw.length % 2 !== 1) invalid("a null-prototype object entry is malformed.");
    const object: Record<string, unknown> = Object.create(null);
    this.#enter(index, object, depth, false);
    for (let i = 1; i < raw.length; i += 2) {
      const key = raw[i];
      if (typeof key !== "string") invalid("a null-prototype object has a non-string key.");
      if (key === "__proto__") invalid("an object has a __proto__ key.");
      const value = this.ref(raw[i + 1], depth, false);
      object[key] = value;
      if (value instanceof VocabularyPlaceholder) this.#placeholders().placedAt(object, key);
    }
    return object;
  }

  #arrayBuffer(raw: unknown[]): ArrayBuffer {
    const text = stringAt(raw, 1, "ArrayBuffer");
    try {
      return decodeBase64(text);
    } catch (error) {
      invalid("an ArrayBuffer entry is not base64.", error);
    }
  }

  #view(index: number, raw: unknown[], tag: string): unknown {
    const bufferRef = raw[1];
    const target = typeof bufferRef === "number" && bufferRef >= 0
      ? this.#values[bufferRef]
      : undefined;
    // Checked before following the reference, so that the buffer is never
    // something else (a huge length, say) that the constructor would
    // allocate for.
    if (!Array.isArray(target) || target[0] !== "ArrayBuffer") {
      invalid(`an entry of type ${tag} does not refer to an ArrayBuffer.`);
    }
    const buffer = this.ref(bufferRef, 0, false) as ArrayBuffer;
    const constructor = (globalThis as Record<string, unknown>)[tag] as
      | (new (buffer: ArrayBuffer, byteOffset?: number, length?: number) => unknown)
      | undefined;
    if (typeof constructor !== "function") invalid(`${tag} is not available on this runtime.`);
    try {
      if (raw.length === 2) return this.#done(index, new constructor(buffer));
      const byteOffset = raw[2];
      const length = raw[3];
      if (raw.length !== 4 || typeof byteOffset !== "number" || typeof length !== "number") {
        invalid(`an entry of type ${tag} is malformed.`);
      }
      return this.#done(index, new constructor(buffer, byteOffset, length));
    } catch (error) {
      if (error instanceof TaskPayloadDecodingError) throw error;
      invalid(`an entry of type ${tag} does not fit its buffer.`, error);
    }
  }

  #pairAt(raw: unknown[], depth: number): unknown[] {
    if (raw.length !== 2 || typeof raw[1] !== "number") {
      invalid(`an entry of type ${raw[0]} is malformed.`);
    }
    const pair = this.ref(raw[1], depth, true);
    if (!Array.isArray(pair) || pair.length !== 2) {
      invalid(`an entry of type ${raw[0]} is malformed.`);
    }
    return pair;
  }

  #vocabulary(index: number, raw: unknown[], depth: number): unknown {
    this.#state[index] = BUSY;
    const [className, jsonLd] = this.#pairAt(raw, depth);
    if (typeof className !== "string") invalid("a vocabulary object entry is malformed.");
    const cls = vocabularyClass(className);
    if (cls == null) invalid(`unknown vocabulary class ${JSON.stringify(className)}.`);
    return this.#done(index, this.#placeholders().create(cls, className, jsonLd));
  }
}

function regExpFrom(raw: unknown[]): RegExp {
  const source = stringAt(raw, 1, "RegExp");
  const flags = raw.length > 2 ? stringAt(raw, 2, "RegExp") : "";
  try {
    return new RegExp(source, flags);
  } catch (error) {
    invalid("a RegExp entry is not a valid regular expression.", error);
  }
}

function urlFrom(raw: unknown[]): URL {
  const text = stringAt(raw, 1, "URL");
  try {
    return new URL(text);
  } catch (error) {
    invalid("a URL entry is not a valid URL.", error);
  }
}

function stringAt(raw: unknown[], i: number, tag: string): string {
  const value = raw[i];
  if (typeof value !== "string") invalid(`an entry of type ${tag} is malformed.`);
  return value;
}

/**
 * Decodes one wire string.
 * @param text The wire string.
 * @param limits The limits.
 * @param loaders The loaders vocabulary objects are rebuilt with.
 * @returns The payload.
 * @throws {TaskPayloadDecodingError} When the string is not a payload the
 *         codec wrote, exceeds a limit, or holds a vocabulary object that
 *         cannot be rebuilt.
 * @throws {TaskPayloadLoadError} When a loader failed while rebuilding a
 *         vocabulary object.
 */
export function decodePayload(
  text: string,
  limits: ResolvedLimits,
  loaders: Loaders,
): Promise<unknown> {
  try {
    return Promise.resolve(decodePayloadNow(text, limits, loaders));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * {@link decodePayload} without a promise when none is needed: the value
 * at once, or a promise of it when Activity Vocabulary objects must be
 * rebuilt with the loaders.  A decoded value is never a `Promise` (the
 * format cannot hold one), so `instanceof Promise` tells the two apart.
 * On every task run.  Internal.
 * @throws {TaskPayloadDecodingError} When the text is not a valid payload.
 */
export function decodePayloadNow(
  text: string,
  limits: ResolvedLimits,
  loaders: Loaders,
): unknown {
  if (typeof text !== "string") invalid(`expected a string, got ${typeof text}.`);
  if (text.length > limits.maxSize) {
    invalid(`it is ${text.length} characters long, more than ${limits.maxSize} (maxSize).`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    invalid(`it is not JSON: ${(error as Error)?.message}`, error);
  }
  if (typeof parsed === "number") {
    // A payload that is undefined, NaN, ±Infinity or -0 is its reference.
    if (parsed >= 0 || parsed === HOLE || parsed === SPARSE) {
      invalid("it is not an encoded payload.");
    }
    return new Decoder([], limits).ref(parsed, 0, false);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) invalid("it is not an encoded payload.");
  const decoder = new Decoder(parsed, limits);
  let root: unknown;
  try {
    root = decoder.ref(0, 0, false);
  } catch (error) {
    if (error instanceof TaskPayloadDecodingError) throw error;
    // The engine's own limits (the stack, memory) with a maxDepth raised
    // beyond what it can take.
    invalid(`${(error as Error)?.name}: ${(error as Error)?.message}`, error);
  }
  const found = decoder.found;
  if (found == null || found.list.length === 0) return root;
  return found.rebuild(root, loaders);
}
