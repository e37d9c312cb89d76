import * as vocab from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { DevalueError, parse, stringify } from "devalue";
import { TaskPayloadDecodingError, TaskPayloadEncodingError } from "./errors.ts";

/**
 * What {@link decodeTaskPayload} needs to rebuild Activity Vocabulary
 * objects from their JSON-LD.
 * @since 0.1.0
 */
export interface DecodeTaskPayloadOptions {
  /** Loads remote JSON-LD documents that vocabulary objects refer to. */
  readonly documentLoader: DocumentLoader;
  /** Loads JSON-LD contexts; `documentLoader` by default. */
  readonly contextLoader?: DocumentLoader;
}

/** A vocabulary class as far as the codec needs it. */
interface VocabularyClass {
  fromJsonLd(json: unknown, options: DecodeTaskPayloadOptions): Promise<unknown>;
  readonly prototype: { toJsonLd(): Promise<unknown> };
}

// The vocabulary does not have one root class: Object, Link, PropertyValue,
// Endpoints, Source, CryptographicKey and others each start their own
// hierarchy.  So every exported class with a JSON-LD pair is recognised, and
// an object is encoded with the name of the most specific exported class it
// is an instance of, whose fromJsonLd() rebuilds it.
const vocabularyClasses: ReadonlyMap<VocabularyClass, string> = new Map(
  Object.entries(vocab).flatMap(([name, value]) =>
    typeof value === "function" && "fromJsonLd" in value &&
      typeof (value as { fromJsonLd: unknown }).fromJsonLd === "function" &&
      typeof (value.prototype as { toJsonLd?: unknown })?.toJsonLd === "function"
      ? [[value as unknown as VocabularyClass, name] as const]
      : []
  ),
);
const vocabularyClassesByName: ReadonlyMap<string, VocabularyClass> = new Map(
  [...vocabularyClasses].map(([cls, name]) => [name, cls]),
);

/** Finds the name of the most specific vocabulary class of `value`. */
function vocabularyClassName(value: object): string | undefined {
  for (
    let proto = Object.getPrototypeOf(value);
    proto != null;
    proto = Object.getPrototypeOf(proto)
  ) {
    const name = vocabularyClasses.get(proto.constructor);
    if (name != null && proto.constructor.prototype === proto) return name;
  }
  return undefined;
}

/**
 * Stands in for a vocabulary object while devalue, whose reducers and
 * revivers are synchronous, handles the rest of the payload: the JSON-LD is
 * produced (or consumed) asynchronously before (or after) it runs.
 */
class VocabularyPlaceholder {
  readonly className: string;
  readonly jsonLd: unknown;
  constructor(className: string, jsonLd: unknown) {
    this.className = className;
    this.jsonLd = jsonLd;
  }
}

const VOCABULARY_TAG = "fedwork.vocab";
const TEMPORAL_TAG = "fedwork.temporal";

// devalue knows Temporal objects but revives them with the global
// Temporal, which Node.js and Bun lack; so they get their own reducer and
// are revived with the polyfill Fedwork uses everywhere.
const temporalTypes = {
  "Temporal.Duration": (text: string) => Temporal.Duration.from(text),
  "Temporal.Instant": (text: string) => Temporal.Instant.from(text),
  "Temporal.PlainDate": (text: string) => Temporal.PlainDate.from(text),
  "Temporal.PlainTime": (text: string) => Temporal.PlainTime.from(text),
  "Temporal.PlainDateTime": (text: string) => Temporal.PlainDateTime.from(text),
  "Temporal.PlainMonthDay": (text: string) => Temporal.PlainMonthDay.from(text),
  "Temporal.PlainYearMonth": (text: string) => Temporal.PlainYearMonth.from(text),
  "Temporal.ZonedDateTime": (text: string) => Temporal.ZonedDateTime.from(text),
} as const;

function reduceTemporal(thing: unknown): false | [string, string] {
  if (thing == null || typeof thing !== "object") return false;
  const tag = Object.prototype.toString.call(thing).slice(8, -1);
  if (!Object.hasOwn(temporalTypes, tag)) return false;
  return [tag, String(thing)];
}

function reviveTemporal(pair: unknown): unknown {
  if (
    !Array.isArray(pair) || pair.length !== 2 || typeof pair[1] !== "string" ||
    !Object.hasOwn(temporalTypes, pair[0])
  ) {
    throw new TypeError("malformed Temporal entry.");
  }
  return temporalTypes[pair[0] as keyof typeof temporalTypes](pair[1]);
}

/**
 * Encodes a task payload into the string a `TaskMessage` carries.
 *
 * The payload may hold JSON values, `undefined`, `NaN`, `-0`, `Infinity`,
 * `bigint`, `Date`, `RegExp`, `URL`, `URLSearchParams`, `Map`, `Set`, typed
 * arrays, `ArrayBuffer`, Temporal objects (decoded as
 * `@js-temporal/polyfill` instances), shared and cyclic references, and Activity
 * Vocabulary objects (`Note`, `Create`, …), which travel as their JSON-LD
 * documents.
 *
 * @example
 * ```ts
 * const text = await encodeTaskPayload({ at: new Date(), tags: new Set(["a"]) });
 * ```
 * @param value The payload.
 * @returns The encoded payload.
 * @throws {TaskPayloadEncodingError} (as a rejection) When the payload
 *         holds a value the codec cannot carry (a function, a symbol, an
 *         instance of another class); the error names its path.
 * @since 0.1.0
 */
export async function encodeTaskPayload(value: unknown): Promise<string> {
  const prepared = await replaceVocabularyObjects(value);
  try {
    return stringify(prepared, {
      [VOCABULARY_TAG]: (thing: unknown) =>
        thing instanceof VocabularyPlaceholder && [thing.className, thing.jsonLd],
      [TEMPORAL_TAG]: reduceTemporal,
    });
  } catch (error) {
    if (error instanceof DevalueError) {
      throw new TaskPayloadEncodingError(
        `data${error.path}`,
        `${error.message.replace(/\.?$/, ".")}`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Decodes a string written by {@link encodeTaskPayload}, rebuilding
 * Activity Vocabulary objects as instances of their classes.
 * @param text The encoded payload.
 * @param options The document loader (and context loader) vocabulary
 *                objects are rebuilt with.
 * @returns The payload.
 * @throws {TaskPayloadDecodingError} (as a rejection) When the text is not
 *         an encoded payload, or a vocabulary object cannot be rebuilt.
 * @since 0.1.0
 */
export async function decodeTaskPayload(
  text: string,
  options: DecodeTaskPayloadOptions,
): Promise<unknown> {
  if (typeof text !== "string") {
    throw new TaskPayloadDecodingError(`expected a string, got ${typeof text}.`);
  }
  let parsed: unknown;
  try {
    parsed = parse(text, {
      [VOCABULARY_TAG]: (pair: unknown) => {
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string") {
          throw new TypeError("malformed vocabulary object entry.");
        }
        return new VocabularyPlaceholder(pair[0], pair[1]);
      },
      [TEMPORAL_TAG]: reviveTemporal,
    });
  } catch (error) {
    throw new TaskPayloadDecodingError(
      error instanceof Error ? error.message : String(error),
      { cause: error },
    );
  }
  const loaders = {
    documentLoader: options.documentLoader,
    contextLoader: options.contextLoader ?? options.documentLoader,
  };
  return await restoreVocabularyObjects(parsed, loaders);
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Returns a copy of the payload in which every vocabulary object is
 * replaced by a placeholder holding its JSON-LD.  Arrays, plain objects,
 * maps and sets are copied (other values are kept as they are for devalue
 * to judge); each is copied once, so shared and cyclic references survive.
 */
async function replaceVocabularyObjects(root: unknown): Promise<unknown> {
  const copies = new Map<object, unknown>();

  async function visit(value: unknown, path: string): Promise<unknown> {
    if (value == null || typeof value !== "object") return value;
    const seen = copies.get(value);
    if (seen !== undefined || copies.has(value)) return seen;
    const className = vocabularyClassName(value);
    if (className != null) {
      let jsonLd: unknown;
      try {
        jsonLd = await (value as { toJsonLd(): Promise<unknown> }).toJsonLd();
      } catch (error) {
        throw new TaskPayloadEncodingError(
          path,
          `the ${className} object could not be turned into JSON-LD.`,
          { cause: error },
        );
      }
      const placeholder = new VocabularyPlaceholder(className, jsonLd);
      copies.set(value, placeholder);
      return placeholder;
    }
    if (Array.isArray(value)) {
      const copy: unknown[] = new Array(value.length);
      copies.set(value, copy);
      for (let i = 0; i < value.length; i++) {
        // Keep holes as holes: devalue encodes sparse arrays faithfully.
        if (Object.hasOwn(value, i)) copy[i] = await visit(value[i], `${path}[${i}]`);
      }
      return copy;
    }
    if (value instanceof Map) {
      const copy = new Map();
      copies.set(value, copy);
      for (const [key, item] of value) {
        const keyPath = `${path}.get(${describeKey(key)})`;
        copy.set(await visit(key, keyPath), await visit(item, keyPath));
      }
      return copy;
    }
    if (value instanceof Set) {
      const copy = new Set();
      copies.set(value, copy);
      let i = 0;
      for (const item of value) copy.add(await visit(item, `${path}.<member ${i++}>`));
      return copy;
    }
    if (isPlainObject(value)) {
      const copy = Object.create(Object.getPrototypeOf(value));
      copies.set(value, copy);
      // Reflect.ownKeys keeps symbol keys so that devalue still rejects
      // them; defineProperty keeps a "__proto__" key an ordinary key.
      for (const key of Reflect.ownKeys(value)) {
        const item = (value as Record<PropertyKey, unknown>)[key];
        Object.defineProperty(copy, key, {
          value: await visit(item, `${path}${formatKey(key)}`),
          enumerable: Object.prototype.propertyIsEnumerable.call(value, key),
          writable: true,
          configurable: true,
        });
      }
      return copy;
    }
    copies.set(value, value);
    return value;
  }

  return await visit(root, "data");
}

/**
 * Replaces, in place, every placeholder in a freshly parsed payload by the
 * vocabulary object rebuilt from its JSON-LD.  A placeholder reached twice
 * yields the same object both times.
 */
async function restoreVocabularyObjects(
  root: unknown,
  options: Required<DecodeTaskPayloadOptions>,
): Promise<unknown> {
  const visited = new Set<object>();
  const rebuilt = new Map<VocabularyPlaceholder, Promise<unknown>>();

  function rebuild(placeholder: VocabularyPlaceholder): Promise<unknown> {
    let promise = rebuilt.get(placeholder);
    if (promise == null) {
      const cls = vocabularyClassesByName.get(placeholder.className);
      promise = cls == null
        ? Promise.reject(
          new TaskPayloadDecodingError(
            `unknown vocabulary class ${JSON.stringify(placeholder.className)}.`,
          ),
        )
        : cls.fromJsonLd(placeholder.jsonLd, options).catch((error: unknown) => {
          throw new TaskPayloadDecodingError(
            `the ${placeholder.className} object could not be rebuilt from its JSON-LD: ${
              error instanceof Error ? error.message : String(error)
            }`,
            { cause: error },
          );
        });
      rebuilt.set(placeholder, promise);
    }
    return promise;
  }

  async function visit(value: unknown): Promise<unknown> {
    if (value instanceof VocabularyPlaceholder) return await rebuild(value);
    if (value == null || typeof value !== "object" || visited.has(value)) return value;
    visited.add(value);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        if (!Object.hasOwn(value, i)) continue;
        const restored = await visit(value[i]);
        if (restored !== value[i]) value[i] = restored;
      }
    } else if (value instanceof Map) {
      const entries = [...value];
      const restored = [];
      let changed = false;
      for (const [key, item] of entries) {
        const newKey = await visit(key);
        const newItem = await visit(item);
        changed ||= newKey !== key || newItem !== item;
        restored.push([newKey, newItem] as const);
      }
      if (changed) {
        value.clear();
        for (const [key, item] of restored) value.set(key, item);
      }
    } else if (value instanceof Set) {
      const members = [...value];
      const restored = [];
      let changed = false;
      for (const member of members) {
        const newMember = await visit(member);
        changed ||= newMember !== member;
        restored.push(newMember);
      }
      if (changed) {
        value.clear();
        for (const member of restored) value.add(member);
      }
    } else if (isPlainObject(value)) {
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        const restored = await visit(item);
        if (restored !== item) {
          Object.defineProperty(value, key, {
            value: restored,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
      }
    }
    return value;
  }

  return await visit(root);
}

function formatKey(key: PropertyKey): string {
  if (typeof key === "symbol") return `[${String(key)}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key as string)
    ? `.${key as string}`
    : `[${JSON.stringify(key)}]`;
}

function describeKey(key: unknown): string {
  if (typeof key === "string") return JSON.stringify(key);
  if (typeof key === "bigint") return `${key}n`;
  if (key == null || typeof key !== "object") return String(key);
  return `<${(key as { constructor?: { name?: string } }).constructor?.name ?? "object"}>`;
}
