import * as vocab from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";

const logger = getLogger(["fedwork", "task", "codec"]);

/** A vocabulary class as far as the codec needs it. */
export interface VocabularyClass {
  fromJsonLd(
    json: unknown,
    options: { documentLoader: DocumentLoader; contextLoader: DocumentLoader },
  ): Promise<unknown>;
  readonly prototype: object;
}

/** A vocabulary object as far as the codec needs it. */
interface VocabularyObject {
  toJsonLd(options?: { format?: "expand" }): Promise<unknown>;
  /** The document the object was parsed from, if it was (Fedify internal). */
  readonly _cachedJsonLd?: unknown;
}

/** How the encoder carries an object it recognised as a vocabulary object. */
export interface VocabularyType {
  /** The name of the class in this copy of `@fedify/vocab`, e.g. `"Create"`. */
  readonly className: string;
}

// The vocabulary does not have one root class: Object, Link, PropertyValue,
// Endpoints, Source, CryptographicKey and others each start their own
// hierarchy.  So every exported class with a JSON-LD pair is recognised, and
// an object is encoded with the name of the most specific exported class it
// is an instance of, whose fromJsonLd() rebuilds it.
const classNames: ReadonlyMap<unknown, string> = new Map(
  Object.entries(vocab).flatMap(([name, value]) =>
    typeof value === "function" && "fromJsonLd" in value &&
      typeof (value as { fromJsonLd: unknown }).fromJsonLd === "function" &&
      typeof (value.prototype as { toJsonLd?: unknown })?.toJsonLd === "function"
      ? [[value, name] as const]
      : []
  ),
);

const classesByName: ReadonlyMap<string, VocabularyClass> = new Map(
  [...classNames].map(([cls, name]) => [name, cls as VocabularyClass]),
);

// Built on first use: reading typeId creates a URL per class.
let classNamesByTypeId: ReadonlyMap<string, string> | undefined;

function classNameForTypeId(typeId: string): string | undefined {
  classNamesByTypeId ??= new Map(
    [...classNames].flatMap(([cls, name]) => {
      const href = typeIdOf(cls);
      return href == null ? [] : [[href, name] as const];
    }),
  );
  return classNamesByTypeId.get(typeId);
}

/** The vocabulary's own identity of a class: its static `typeId` URL. */
function typeIdOf(constructor: unknown): string | undefined {
  if (typeof constructor !== "function") return undefined;
  const typeId: unknown = (constructor as { typeId?: unknown }).typeId;
  if (typeId instanceof URL) return typeId.href;
  // A URL from another realm or polyfill: duck-type it.
  const href = (typeId as { href?: unknown } | null)?.href;
  return typeof href === "string" ? href : undefined;
}

function ownConstructor(proto: object): unknown {
  // Through the descriptor, so that a getter named "constructor" never runs.
  return Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
}

/**
 * The outcome of {@link recogniseVocabulary}: a vocabulary type, or the
 * reason an object that looks like a vocabulary object cannot be carried.
 */
export type VocabularyRecognition =
  | VocabularyType
  | { readonly refused: string }
  | undefined;

const warnedForeignClasses = new WeakSet<object>();

/**
 * Decides whether objects with the given prototype are Activity Vocabulary
 * objects.  Instances of this copy of `@fedify/vocab` (and of classes that
 * extend its classes) are recognised by class; instances of another copy
 * by the vocabulary's own type identity, their class's `typeId`, when this
 * copy knows the type.  An object of a type this copy does not know is
 * refused with an explanation.
 * @param proto The object's prototype.
 * @returns The type, a refusal, or `undefined` when the object is not a
 *          vocabulary object at all.
 */
export function recogniseVocabulary(proto: object): VocabularyRecognition {
  for (let p: object | null = proto; p != null; p = Object.getPrototypeOf(p)) {
    const constructor = ownConstructor(p);
    const className = classNames.get(constructor);
    if (className != null && (constructor as { prototype: unknown }).prototype === p) {
      return { className };
    }
  }
  // Not ours: is it a vocabulary object from another copy?
  const constructor = ownConstructor(proto);
  const typeId = typeIdOf(constructor);
  if (typeId == null || typeof (proto as { toJsonLd?: unknown }).toJsonLd !== "function") {
    return undefined;
  }
  const className = classNameForTypeId(typeId);
  const name = (constructor as { name?: unknown }).name;
  if (className == null) {
    return {
      refused: `the ${String(name)} object (type <${typeId}>) comes from another copy of ` +
        "@fedify/vocab, whose type the copy @fedwork/core uses does not know.  Two copies " +
        "of @fedify/vocab are installed: make the application and @fedwork/core share one " +
        "(run `npm dedupe` or `npm ls @fedify/vocab` to see which packages pin another " +
        'version, align them or add an "overrides" entry; on Deno, map @fedify/vocab ' +
        "to one version in the import map).",
    };
  }
  if (!warnedForeignClasses.has(proto)) {
    warnedForeignClasses.add(proto);
    logger.warn(
      "A {className} object from another copy of @fedify/vocab was encoded by its type " +
        "{typeId}; workers rebuild it as an instance of @fedwork/core's copy, so instanceof " +
        "checks against the other copy's classes fail.  Install one copy of @fedify/vocab.",
      { className, typeId },
    );
  }
  return { className };
}

/**
 * Turns a vocabulary object into the JSON-LD the wire carries.  An object
 * parsed from a document (an activity from an inbox, say) carries that
 * document unchanged, which costs nothing and keeps what the vocabulary
 * does not model (unknown properties, signatures).  Any other object is
 * carried in expanded form: producing it needs no context, and rebuilding
 * from it loads no context, which makes both sides several times faster
 * than the compacted form (see docs/benchmarks.md).
 * @param object The vocabulary object.
 * @returns The JSON-LD: an object (the document it was parsed from) or an
 *          array (expanded form).
 */
export async function vocabularyJsonLd(object: object): Promise<unknown> {
  const value = object as VocabularyObject;
  if (value._cachedJsonLd != null) {
    const cached = await value.toJsonLd();
    // The expanded form is told apart from a document by being an array;
    // a document that is itself an array is re-expanded so that it never
    // passes for expanded output on the other side.
    if (!Array.isArray(cached)) return cached;
  }
  return await value.toJsonLd({ format: "expand" });
}

/**
 * Finds a vocabulary class by the name the encoder wrote.
 * @returns The class, or `undefined` when this copy has no such class.
 */
export function vocabularyClass(className: string): VocabularyClass | undefined {
  return classesByName.get(className);
}

/**
 * Rebuilds a vocabulary object from the JSON-LD the wire carried.
 * @throws Whatever `fromJsonLd()` throws (invalid JSON-LD, loader errors).
 */
export async function rebuildVocabularyObject(
  cls: VocabularyClass,
  jsonLd: unknown,
  loaders: { documentLoader: DocumentLoader; contextLoader: DocumentLoader },
): Promise<unknown> {
  const object = await cls.fromJsonLd(jsonLd, loaders);
  if (
    Array.isArray(jsonLd) && typeof object === "object" && object != null &&
    "_cachedJsonLd" in object
  ) {
    // fromJsonLd() keeps the document it parsed for toJsonLd() to return;
    // for expanded form that would make toJsonLd() on the worker return
    // expanded JSON-LD where the original object returned compacted.
    // Dropping it makes toJsonLd() compact from the properties, as it did
    // on the object that was enqueued.
    (object as { _cachedJsonLd?: unknown })._cachedJsonLd = undefined;
  }
  return object;
}
