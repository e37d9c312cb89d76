import { TaskPayloadEncodingError } from "../errors.ts";
import { type BuiltinKind, encodeBase64 } from "./builtins.ts";
import { classify } from "./classify.ts";
import {
  arrayIndex,
  at,
  describeKey,
  EncodeFailure,
  errorSentence,
  formatKey,
  pathTo,
  toEncodingError,
} from "./encode-failure.ts";
import { MAX_BIGINT_DIGITS, type ResolvedLimits } from "./limits.ts";
import { vocabularyJsonLd } from "./vocabulary.ts";
import {
  HOLE,
  NAN,
  NEGATIVE_INFINITY,
  NEGATIVE_ZERO,
  POSITIVE_INFINITY,
  SPARSE,
  TEMPORAL_TAG,
  UNDEFINED,
  VOCABULARY_TAG,
} from "./wire.ts";

/** A vocabulary object met while flattening, completed afterwards. */
interface VocabularySlot {
  readonly index: number;
  readonly object: object;
  readonly className: string;
  readonly depth: number;
}

const THENABLE = "a promise or thenable cannot be carried (the codec never calls then()); " +
  "await it and enqueue its value.";

// Intrinsic accessors, so that an object cannot change what is read from
// its internal slots by overriding a getter.
const dateGetTime = Date.prototype.getTime;
const dateToISOString = Date.prototype.toISOString;
const regExpSource = Object.getOwnPropertyDescriptor(RegExp.prototype, "source")!.get!;
const regExpFlags = Object.getOwnPropertyDescriptor(RegExp.prototype, "flags")!.get!;
const urlHref = Object.getOwnPropertyDescriptor(URL.prototype, "href")!.get!;
const searchParamsToString = URLSearchParams.prototype.toString;
const mapEntries = Map.prototype.entries;
const setValues = Set.prototype.values;
const arrayBufferByteLength = Object.getOwnPropertyDescriptor(
  ArrayBuffer.prototype,
  "byteLength",
)!.get!;
const isNodeBuffer = (globalThis as { Buffer?: { isBuffer(value: unknown): boolean } }).Buffer
  ?.isBuffer;

/**
 * Flattens one payload into devalue's format, synchronously.  Vocabulary
 * objects get an entry index but no entry; {@link Encoder.completeVocabulary}
 * fills those in once their JSON-LD is known.
 */
class Encoder {
  readonly entries: string[] = [];
  readonly vocabulary: VocabularySlot[] = [];
  readonly #indexes = new Map<object, number>();
  readonly #maxDepth: number;
  readonly #maxSize: number;
  // A running lower bound of the output's length: checked as the output
  // grows, so that an oversized payload is refused after work
  // proportional to maxSize, not to the payload.
  #size = 0;
  #bigIntDigits = 0;

  constructor(limits: ResolvedLimits) {
    this.#maxDepth = limits.maxDepth;
    this.#maxSize = limits.maxSize;
  }

  /**
   * Flattens a value.
   * @param value The value.
   * @param depth How many containers enclose it.
   * @returns Its entry index, or a negative reference for the values that
   *          have no entry.
   */
  flatten(value: unknown, depth: number): number {
    switch (typeof value) {
      case "string":
        return this.#push(JSON.stringify(value));
      case "number":
        if (value !== value) return NAN;
        if (value === Infinity) return POSITIVE_INFINITY;
        if (value === -Infinity) return NEGATIVE_INFINITY;
        if (value === 0 && 1 / value < 0) return NEGATIVE_ZERO;
        return this.#push(String(value));
      case "boolean":
        return this.#push(value ? "true" : "false");
      case "undefined":
        return UNDEFINED;
      case "object":
        return value === null ? this.#push("null") : this.#object(value, depth);
      case "bigint":
        return this.#push(`["BigInt","${this.#bigInt(value)}"]`);
      case "function":
        throw new EncodeFailure("a function cannot be carried.");
      default:
        throw new EncodeFailure("a symbol cannot be carried.");
    }
  }

  #push(text: string): number {
    this.#grow(text.length + 1);
    return this.entries.push(text) - 1;
  }

  #grow(length: number): void {
    this.#size += length;
    if (this.#size > this.#maxSize) {
      throw new EncodeFailure(
        `the encoded payload is longer than ${this.#maxSize} characters (maxSize).`,
      );
    }
  }

  #reserve(value: object): number {
    const index = this.entries.push("") - 1;
    this.#indexes.set(value, index);
    return index;
  }

  #enter(depth: number): void {
    if (depth > this.#maxDepth) {
      throw new EncodeFailure(`it nests deeper than ${this.#maxDepth} levels (maxDepth).`);
    }
  }

  #bigInt(value: bigint): string {
    // Decimal conversion is quadratic: bound the digits by the hexadecimal
    // length (linear to compute) before converting.
    const estimate = Math.ceil(value.toString(16).length * 1.2042);
    if (this.#bigIntDigits + estimate > MAX_BIGINT_DIGITS + 2) {
      throw new EncodeFailure(
        `its bigint values have more than ${MAX_BIGINT_DIGITS} digits together.`,
      );
    }
    const text = value.toString();
    this.#bigIntDigits += text.length;
    return text;
  }

  #object(value: object, depth: number): number {
    const known = this.#indexes.get(value);
    if (known !== undefined) return known;
    if (Array.isArray(value)) return this.#array(value, depth + 1);
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) {
      return this.#record(value, depth + 1, proto === null);
    }
    const classification = classify(proto);
    switch (classification.kind) {
      case "plain":
        return this.#record(value, depth + 1, false);
      case "builtin":
        return this.#builtin(value, classification.builtin, depth);
      case "vocabulary": {
        const index = this.#reserve(value);
        const { className } = classification;
        this.vocabulary.push({ index, object: value, className, depth });
        return index;
      }
      case "refused":
        throw new EncodeFailure(classification.reason);
      default:
        if (typeof (value as { then?: unknown }).then === "function") {
          throw new EncodeFailure(THENABLE);
        }
        throw new EncodeFailure(
          `${
            classification.name === "" ? "an instance of a class" : `a ${classification.name}`
          } object cannot be carried; turn it into a plain object or one of the supported types.`,
        );
    }
  }

  #record(value: object, depth: number, nullPrototype: boolean): number {
    this.#enter(depth);
    const index = this.#reserve(value);
    const keys = Object.keys(value);
    const symbols = Object.getOwnPropertySymbols(value);
    for (let i = 0; i < symbols.length; i++) {
      if (Object.prototype.propertyIsEnumerable.call(value, symbols[i])) {
        throw new EncodeFailure("an object with a symbol key cannot be carried.");
      }
    }
    if (typeof (value as { then?: unknown }).then === "function") {
      throw new EncodeFailure(THENABLE);
    }
    let text = nullPrototype ? '["null"' : "{";
    let key = "";
    try {
      for (let i = 0; i < keys.length; i++) {
        key = keys[i];
        if (key === "__proto__") {
          throw new EncodeFailure(
            "an own __proto__ key cannot be carried (it would set the prototype on the other side).",
          );
        }
        const child = this.flatten((value as Record<string, unknown>)[key], depth);
        const quoted = JSON.stringify(key);
        this.#grow(quoted.length + 2);
        text += nullPrototype
          ? `,${quoted},${child}`
          : i === 0
          ? `${quoted}:${child}`
          : `,${quoted}:${child}`;
      }
    } catch (error) {
      throw at(error, formatKey(key));
    }
    this.entries[index] = nullPrototype ? `${text}]` : `${text}}`;
    return index;
  }

  #array(array: unknown[], depth: number): number {
    this.#enter(depth);
    const index = this.#reserve(array);
    const length = array.length;
    let text = "[";
    let i = 0;
    try {
      for (; i < length; i++) {
        const item = array[i];
        if (item === undefined && !Object.hasOwn(array, i)) break;
        const child = this.flatten(item, depth);
        this.#grow(2);
        text += i === 0 ? child : `,${child}`;
      }
    } catch (error) {
      throw at(error, `[${i}]`);
    }
    this.entries[index] = i === length ? `${text}]` : this.#holeyArray(array, i, text, depth);
    return index;
  }

  /**
   * Finishes an array that has a hole at `firstHole`: as devalue does, with
   * HOLE markers when it is mostly dense, else as [SPARSE, length, index,
   * ref, …].  Either way the work is proportional to the elements present,
   * never to the length.
   */
  #holeyArray(array: unknown[], firstHole: number, prefix: string, depth: number): string {
    const length = array.length;
    const present: number[] = [];
    for (const key of Object.keys(array)) {
      const i = arrayIndex(key);
      if (i >= firstHole && i < length) present.push(i);
    }
    const population = firstHole + present.length;
    const digits = String(length).length;
    const holeCost = (length - population) * 3;
    const sparseCost = 4 + digits + population * (digits + 1);
    let i = firstHole;
    try {
      if (holeCost > sparseCost) {
        let text = `[${SPARSE},${length}`;
        if (firstHole > 0) {
          // The elements before the hole are flattened already.
          const refs = prefix.slice(1).split(",");
          for (let j = 0; j < refs.length; j++) text += `,${j},${refs[j]}`;
        }
        for (let j = 0; j < present.length; j++) {
          i = present[j];
          const child = this.flatten(array[i], depth);
          this.#grow(digits + 2);
          text += `,${i},${child}`;
        }
        return `${text}]`;
      }
      let text = prefix;
      for (; i < length; i++) {
        const child = Object.hasOwn(array, i) ? this.flatten(array[i], depth) : HOLE;
        this.#grow(3);
        text += i === 0 ? child : `,${child}`;
      }
      return `${text}]`;
    } catch (error) {
      throw at(error, `[${i}]`);
    }
  }

  #builtin(value: object, kind: BuiltinKind, depth: number): number {
    switch (kind) {
      case "Date": {
        const time = dateGetTime.call(value);
        return this.#memo(
          value,
          time === time ? `["Date","${dateToISOString.call(value)}"]` : '["Date",""]',
        );
      }
      case "RegExp": {
        const source = JSON.stringify(regExpSource.call(value));
        const flags = regExpFlags.call(value) as string;
        return this.#memo(
          value,
          flags === "" ? `["RegExp",${source}]` : `["RegExp",${source},"${flags}"]`,
        );
      }
      case "URL":
        return this.#memo(value, `["URL",${JSON.stringify(urlHref.call(value))}]`);
      case "URLSearchParams":
        return this.#memo(
          value,
          `["URLSearchParams",${JSON.stringify(searchParamsToString.call(value))}]`,
        );
      case "Map":
        return this.#map(value as Map<unknown, unknown>, depth + 1);
      case "Set":
        return this.#set(value as Set<unknown>, depth + 1);
      case "Number":
      case "String":
      case "Boolean":
      case "BigInt": {
        const primitive = (globalThis[kind].prototype.valueOf as () => unknown).call(value);
        const index = this.#reserve(value);
        this.entries[index] = `["Object",${this.flatten(primitive, depth)}]`;
        return index;
      }
      case "ArrayBuffer":
        return this.#arrayBuffer(value as ArrayBuffer);
      case "DataView":
        return this.#view(value as DataView, "DataView");
      case "Promise":
        throw new EncodeFailure(THENABLE);
      default:
        if (kind.startsWith("TypedArray:")) {
          return this.#view(value as Uint8Array, kind.slice(11));
        }
        return this.#temporal(value, kind);
    }
  }

  #memo(value: object, text: string): number {
    this.#grow(text.length + 1);
    const index = this.#reserve(value);
    this.entries[index] = text;
    return index;
  }

  #map(map: Map<unknown, unknown>, depth: number): number {
    this.#enter(depth);
    const index = this.#reserve(map);
    let text = '["Map"';
    let key: unknown;
    try {
      for (const [k, v] of mapEntries.call(map)) {
        key = k;
        const keyIndex = this.flatten(k, depth);
        const valueIndex = this.flatten(v, depth);
        this.#grow(4);
        text += `,${keyIndex},${valueIndex}`;
      }
    } catch (error) {
      throw at(error, `.get(${describeKey(key)})`);
    }
    this.entries[index] = `${text}]`;
    return index;
  }

  #set(set: Set<unknown>, depth: number): number {
    this.#enter(depth);
    const index = this.#reserve(set);
    let text = '["Set"';
    let i = 0;
    try {
      for (const member of setValues.call(set)) {
        const memberIndex = this.flatten(member, depth);
        this.#grow(2);
        text += `,${memberIndex}`;
        i++;
      }
    } catch (error) {
      throw at(error, `.<member ${i}>`);
    }
    this.entries[index] = `${text}]`;
    return index;
  }

  #arrayBuffer(buffer: ArrayBuffer): number {
    const known = this.#indexes.get(buffer);
    if (known !== undefined) return known;
    const byteLength: number = arrayBufferByteLength.call(buffer);
    this.#grow(Math.ceil(byteLength / 3) * 4 + 20);
    return this.#memo(
      buffer,
      `["ArrayBuffer","${encodeBase64(new Uint8Array(buffer, 0, byteLength))}"]`,
    );
  }

  #view(view: ArrayBufferView, tag: string): number {
    let buffer = view.buffer;
    let byteOffset = view.byteOffset;
    const byteLength = view.byteLength;
    if (!(buffer instanceof ArrayBuffer) || isNodeBuffer?.(view)) {
      // A Node.js Buffer may be a view into a pool that holds unrelated
      // (possibly sensitive) data, and a SharedArrayBuffer cannot travel:
      // carry a copy of the visible bytes only.
      buffer = new Uint8Array(buffer, byteOffset, byteLength).slice().buffer;
      byteOffset = 0;
    }
    const bufferIndex = this.#arrayBuffer(buffer as ArrayBuffer);
    const whole = byteOffset === 0 && byteLength === arrayBufferByteLength.call(buffer);
    const length = tag === "DataView" ? byteLength : (view as Uint8Array).length;
    return this.#memo(
      view,
      whole ? `["${tag}",${bufferIndex}]` : `["${tag}",${bufferIndex},${byteOffset},${length}]`,
    );
  }

  #temporal(value: object, kind: string): number {
    // Written as 0.1.0 wrote it, so that older workers can read it.
    const index = this.#reserve(value);
    const type = this.#push(JSON.stringify(kind));
    const text = this.#push(JSON.stringify(String(value)));
    const pair = this.#push(`[${type},${text}]`);
    this.entries[index] = `["${TEMPORAL_TAG}",${pair}]`;
    return index;
  }

  /**
   * Turns the vocabulary objects met while flattening into JSON-LD and
   * flattens that into their entries.
   * @param root The payload, to name paths in errors.
   * @param jsonLdCache JSON-LD already produced for objects, shared by the
   *                    payloads of one batch.
   */
  async completeVocabulary(
    root: unknown,
    jsonLdCache: Map<object, Promise<unknown>>,
  ): Promise<void> {
    const slots = this.vocabulary;
    const jsonLds = await Promise.all(slots.map(async (slot) => {
      let promise = jsonLdCache.get(slot.object);
      if (promise == null) {
        promise = vocabularyJsonLd(slot.object);
        jsonLdCache.set(slot.object, promise);
      }
      try {
        return await promise;
      } catch (error) {
        throw new TaskPayloadEncodingError(
          pathTo(root, slot.object, this.#maxDepth),
          `the ${slot.className} object could not be turned into JSON-LD: ${errorSentence(error)}`,
          { cause: error },
        );
      }
    }));
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i];
      let pair: number;
      try {
        pair = this.flatten([slot.className, jsonLds[i]], slot.depth);
      } catch (error) {
        throw toEncodingError(error, pathTo(root, slot.object, this.#maxDepth) + "<JSON-LD>");
      }
      this.entries[slot.index] = `["${VOCABULARY_TAG}",${pair}]`;
    }
  }

  /** Joins the entries into the wire string. */
  finish(root: number): string {
    // A payload that is itself undefined, NaN, ±Infinity or -0 is written
    // as its reference alone, as devalue does.
    if (root < 0) return String(root);
    const text = `[${this.entries.join(",")}]`;
    if (text.length > this.#maxSize) {
      throw new TaskPayloadEncodingError(
        "data",
        `the encoded payload is ${text.length} characters long, more than ${this.#maxSize} ` +
          "(maxSize).",
      );
    }
    return text;
  }
}

/**
 * Encodes one payload.
 * @param value The payload.
 * @param limits The limits.
 * @param jsonLdCache JSON-LD of vocabulary objects, shared within a batch.
 * @returns The wire string, or a promise of it when the payload holds
 *          vocabulary objects.
 * @throws {TaskPayloadEncodingError} When the payload cannot be carried
 *         (thrown, or as a rejection once vocabulary objects are involved).
 */
export function encodePayload(
  value: unknown,
  limits: ResolvedLimits,
  jsonLdCache: Map<object, Promise<unknown>>,
): string | Promise<string> {
  const encoder = new Encoder(limits);
  let root: number;
  try {
    root = encoder.flatten(value, 0);
  } catch (error) {
    throw toEncodingError(error, "data");
  }
  // Without vocabulary objects there is nothing to wait for: the string is
  // returned at once, so that the common case costs no promise.
  if (encoder.vocabulary.length === 0) return encoder.finish(root);
  return encoder.completeVocabulary(value, jsonLdCache).then(() => encoder.finish(root));
}
