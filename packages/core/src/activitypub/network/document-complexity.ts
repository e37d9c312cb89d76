// The limits every remote JSON-LD document is held to before any JSON-LD
// processing touches it.  Written by hand, not taken from a library: the
// point is one linear pass over the parsed JSON that counts exactly what
// makes jsonld.js expensive, and no JSON-LD or JSON-schema library offers
// cost limits of this kind.
//
// Why these quantities: jsonld.js processes each entry of each `@context`
// by cloning the active context, whose size is every term defined so far
// (the bundled ActivityStreams context alone defines ~130), and keeps the
// processed contexts; an activity whose `@context` lists n tiny inline
// contexts costs n²/2 term copies in time and memory (n = 12,000, 495 KiB:
// out of memory).  Bounding the count of context entries (E) and of inline
// term definitions (T) bounds that work by E × (T + the bundled contexts'
// terms).  Expansion and canonicalization are otherwise linear in the
// number of JSON values and the length of the strings, bounded next.
import { preloadedContexts } from "@fedify/vocab-runtime";
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveIntegerOption } from "../../options/value-options.ts";
import { markRemoteFailureClass } from "../../processing/remote-failure.ts";

/**
 * Limits on the shape of a remote JSON-LD document, checked on the parsed
 * JSON in one linear pass before any JSON-LD processing (expansion,
 * canonicalization, `fromJsonLd()`), so that no document can make that
 * processing cost more than a bounded slice of CPU and memory.  The
 * defaults leave real servers' documents (Mastodon, Misskey, Pleroma,
 * GoToSocial, Fedify) room many times over; see the manual's security page
 * for what was measured.
 * @since 0.4.0
 */
export interface DocumentComplexityLimits {
  /**
   * The most `@context` entries in the whole document: each URL or inline
   * context object of every `@context` (an array counts its items), the
   * scoped contexts inside term definitions included.  Real documents have
   * two to eight.
   * @default 64
   */
  readonly maxContextEntries?: number;
  /**
   * The most term definitions in all inline contexts of the document
   * together.  Mastodon's inline context defines about 25, Misskey's
   * about 40.
   * @default 1024
   */
  readonly maxContextTerms?: number;
  /**
   * An estimate of the JSON-LD context processing the document asks for,
   * the cost that grows with the square of its contexts: every context
   * entry, and four times every use of a term that carries a scoped
   * context (such as `DataIntegrityProof` or `Multikey` from the bundled
   * contexts, whose processing measured about four times as costly),
   * multiplied by the terms in scope (those of the bundled contexts it
   * names, its inline terms, and `maxContextTerms` for each other context
   * URL).  Mastodon's notes ask for about 600, Fedify's actors about 3,000;
   * at 100,000 the processing costs at most about 300 ms.
   * @default 100000
   */
  readonly maxContextWork?: number;
  /**
   * How deeply arrays and objects may nest, the document itself being the
   * first level.  Real activities stay under ten.
   * @default 64
   */
  readonly maxDepth?: number;
  /**
   * The most JSON values in the document: every object, array, string,
   * number, boolean and `null`, at any depth.  A Mastodon note with its
   * mentions, tags and attachments has a few hundred; a collection page of
   * twenty embedded activities one to two thousand.
   * @default 5000
   */
  readonly maxValues?: number;
  /**
   * The longest string (a value or a key), in UTF-16 code units.  Long
   * enough for a long article's HTML `content`.
   * @default 524288 (512 Ki)
   */
  readonly maxStringLength?: number;
}

/**
 * {@link DocumentComplexityLimits} with every default filled in.
 * @since 0.4.0
 */
export type ResolvedDocumentComplexityLimits = Required<DocumentComplexityLimits>;

/**
 * The default {@link DocumentComplexityLimits}.
 * @since 0.4.0
 */
export const DEFAULT_DOCUMENT_COMPLEXITY_LIMITS: ResolvedDocumentComplexityLimits = Object
  .freeze({
    maxContextEntries: 64,
    maxContextTerms: 1024,
    maxContextWork: 100_000,
    maxDepth: 64,
    maxValues: 5_000,
    maxStringLength: 512 * 1024,
  });

/** The limits {@link resolveDocumentComplexityLimits} made (and so checked). */
const resolvedLimits = new WeakSet<DocumentComplexityLimits>([DEFAULT_DOCUMENT_COMPLEXITY_LIMITS]);

const LIMIT_NAMES = Object.keys(DEFAULT_DOCUMENT_COMPLEXITY_LIMITS) as readonly (
  keyof DocumentComplexityLimits
)[];

/**
 * Checks limits given as an option and fills in the defaults.
 * @param limits The limits; `undefined` for the defaults.
 * @param where The option's name, for error messages
 *              (e.g. `"remoteDocuments"`).
 * @returns The resolved limits.
 * @throws {UnknownOptionError} For a name it does not know.
 * @throws {RangeError} For a limit that is not a positive integer.
 * @since 0.4.0
 */
export function resolveDocumentComplexityLimits(
  limits: DocumentComplexityLimits | undefined,
  where = "the document limits",
): ResolvedDocumentComplexityLimits {
  if (limits == null) return DEFAULT_DOCUMENT_COMPLEXITY_LIMITS;
  if (resolvedLimits.has(limits)) return limits as ResolvedDocumentComplexityLimits;
  if (typeof limits !== "object") {
    throw new TypeError(`The ${where} option must be an object such as { maxValues: 20000 }.`);
  }
  assertKnownOptions(limits, LIMIT_NAMES, { where });
  const resolved = {} as Record<keyof DocumentComplexityLimits, number>;
  for (const name of LIMIT_NAMES) {
    resolved[name] = positiveIntegerOption(
      limits[name],
      `${where}.${name}`,
      DEFAULT_DOCUMENT_COMPLEXITY_LIMITS[name],
    );
  }
  Object.freeze(resolved);
  resolvedLimits.add(resolved);
  return resolved;
}

/**
 * Which limit a document broke, as {@link checkDocumentComplexity} and
 * {@link DocumentTooComplexError} report it.
 * @since 0.4.0
 */
export type DocumentComplexityLimit = keyof DocumentComplexityLimits;

/**
 * What {@link checkDocumentComplexity} found wrong with a document.
 * @since 0.4.0
 */
export interface DocumentComplexityViolation {
  /** The limit that was passed. */
  readonly limit: DocumentComplexityLimit;
  /** The limit's value. */
  readonly max: number;
  /** For people and logs: what was found, and the limit. */
  readonly message: string;
}

/**
 * Thrown when a remote document breaks one of its
 * {@link DocumentComplexityLimits}: it was refused before any JSON-LD
 * processing.  Retrying cannot help.
 * @since 0.4.0
 */
export class DocumentTooComplexError extends Error {
  /** The limit that was passed. */
  readonly limit: DocumentComplexityLimit;
  /** The limit's value. */
  readonly max: number;

  /**
   * @param violation What was wrong.
   * @param url The document's URL, when it has one.
   */
  constructor(violation: DocumentComplexityViolation, url?: string) {
    super(url == null ? violation.message : `Refused ${url}: ${violation.message}`);
    this.name = "DocumentTooComplexError";
    this.limit = violation.limit;
    this.max = violation.max;
  }
}

/**
 * Checks a parsed JSON document against {@link DocumentComplexityLimits},
 * in time linear in its size (one pass, and a second one only for a
 * document with inline scoped contexts), stopping at the first limit
 * passed; an explicit stack, so any depth is safe.  Cycles (impossible in
 * parsed JSON, possible in objects built in code) count each visit, so
 * they hit `maxValues`.
 * @param document The parsed JSON.
 * @param given The limits; the defaults for those left out.
 * @returns `null` when the document is within every limit, else what it
 *          broke.
 * @throws {RangeError} When a limit is not a positive integer.
 * @since 0.4.0
 * @example
 * ```ts
 * import { checkDocumentComplexity } from "@fedwork/core";
 *
 * const document = JSON.parse('{"@context": ["https://www.w3.org/ns/activitystreams"]}');
 * const violation = checkDocumentComplexity(document, { maxValues: 1000 });
 * if (violation != null) console.log(`Refused: ${violation.message}`);
 * ```
 */
export function checkDocumentComplexity(
  document: unknown,
  given: DocumentComplexityLimits = DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
): DocumentComplexityViolation | null {
  // Limits resolved once are not checked again on every document.
  const limits = resolvedLimits.has(given)
    ? given as ResolvedDocumentComplexityLimits
    : resolveDocumentComplexityLimits(given);
  const bundled = bundledContexts();
  const counts: ContextCounts = {
    entries: 0,
    inlineTerms: 0,
    scopedUses: 0,
    urls: new Set(),
    inlineScoped: new Set(),
  };
  let values = 0;
  // [value, its depth, whether it is (an item of) a `@context`]
  const pending: [unknown, number, boolean][] = [[document, 1, false]];
  while (pending.length > 0) {
    const [value, depth, isContext] = pending.pop()!;
    if (++values > limits.maxValues) {
      return violation("maxValues", limits, `It holds more than ${limits.maxValues} JSON values.`);
    }
    // Every item of a `@context` (a URL, an inline context, `null`) is an
    // entry; an array's items are counted as they come off the stack.
    if (isContext && !Array.isArray(value)) {
      const found = countContextEntry(value, counts, limits);
      if (found != null) return found;
    }
    if (typeof value === "string") {
      if (value.length > limits.maxStringLength) return stringTooLong(limits);
      // A type named by a term with a scoped context (`"type": "Multikey"`).
      if (!isContext && bundled.scopedTerms.has(value)) counts.scopedUses++;
      continue;
    }
    if (typeof value !== "object" || value == null) continue;
    if (depth > limits.maxDepth) {
      return violation("maxDepth", limits, `It nests deeper than ${limits.maxDepth} levels.`);
    }
    if (Array.isArray(value)) {
      for (const item of value) pending.push([item, depth + 1, isContext]);
      continue;
    }
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (key.length > limits.maxStringLength) return stringTooLong(limits);
      // A property whose term has a scoped context (`proofPurpose`).
      if (!isContext && bundled.scopedTerms.has(key)) counts.scopedUses++;
      // A `@context` anywhere, a term definition's own (a scoped context)
      // included, is a context.
      pending.push([(value as Record<string, unknown>)[key], depth + 1, key === "@context"]);
    }
  }
  if (counts.inlineScoped.size > 0) counts.scopedUses += countUses(document, counts.inlineScoped);
  let termsInScope = counts.inlineTerms;
  for (const url of counts.urls) {
    termsInScope += bundled.termCounts.get(url) ?? limits.maxContextTerms;
  }
  // Scoped contexts measured about four times as costly per use as an
  // entry: they are processed again, and reverted, at every node using them.
  const work = (counts.entries + 4 * counts.scopedUses) * termsInScope;
  if (work > limits.maxContextWork) {
    return violation(
      "maxContextWork",
      limits,
      `Its JSON-LD contexts would cost ${work} units of work (${counts.entries} entries and ` +
        `${counts.scopedUses} uses of scoped contexts over ${termsInScope} terms), more ` +
        `than ${limits.maxContextWork}.`,
    );
  }
  return null;
}

interface ContextCounts {
  entries: number;
  inlineTerms: number;
  scopedUses: number;
  /** The context URLs named, each once. */
  readonly urls: Set<string>;
  /** The terms that inline contexts give a scoped context. */
  readonly inlineScoped: Set<string>;
}

/**
 * Throws a {@link DocumentTooComplexError} when `document` breaks one of
 * `limits`: the one check every loader wrapper and lookup makes.
 * Internal.
 * @param document The parsed JSON.
 * @param limits The limits.
 * @param url The document's URL, for the message.
 * @throws {DocumentTooComplexError} When a limit is passed.
 * @since 0.4.0
 */
export function assertWithinDocumentLimits(
  document: unknown,
  limits: DocumentComplexityLimits | undefined,
  url: string,
): void {
  const violation = checkDocumentComplexity(document, limits);
  if (violation != null) throw new DocumentTooComplexError(violation, url);
}

/** Counts one entry of a `@context` and, for an inline context, its terms. */
function countContextEntry(
  value: unknown,
  counts: ContextCounts,
  limits: ResolvedDocumentComplexityLimits,
): DocumentComplexityViolation | null {
  if (++counts.entries > limits.maxContextEntries) {
    return violation(
      "maxContextEntries",
      limits,
      `It has more than ${limits.maxContextEntries} JSON-LD context entries.`,
    );
  }
  if (typeof value === "string") counts.urls.add(value);
  if (typeof value !== "object" || value == null) return null;
  for (const key in value) {
    if (!Object.hasOwn(value, key) || key.startsWith("@")) continue;
    if (++counts.inlineTerms > limits.maxContextTerms) {
      return violation(
        "maxContextTerms",
        limits,
        `Its inline JSON-LD contexts define more than ${limits.maxContextTerms} terms.`,
      );
    }
    const definition = (value as Record<string, unknown>)[key];
    if (typeof definition === "object" && definition != null && "@context" in definition) {
      counts.inlineScoped.add(key);
    }
  }
  return null;
}

/** How often `terms` appear as keys or strings outside contexts. */
function countUses(document: unknown, terms: ReadonlySet<string>): number {
  let uses = 0;
  const pending: unknown[] = [document];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string") {
      if (terms.has(value)) uses++;
    } else if (Array.isArray(value)) {
      pending.push(...value);
    } else if (typeof value === "object" && value != null) {
      for (const key in value) {
        if (!Object.hasOwn(value, key) || key === "@context") continue;
        if (terms.has(key)) uses++;
        pending.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return uses;
}

/** What the checks need to know of the contexts bundled with `@fedify/vocab-runtime`. */
interface BundledContexts {
  /** Each bundled context's URL and how many terms it defines. */
  readonly termCounts: ReadonlyMap<string, number>;
  /** The terms that carry a scoped context in some bundled context. */
  readonly scopedTerms: ReadonlySet<string>;
}

let bundledContextsCache: BundledContexts | undefined;

function bundledContexts(): BundledContexts {
  if (bundledContextsCache != null) return bundledContextsCache;
  const termCounts = new Map<string, number>();
  const scopedTerms = new Set<string>();
  for (const [url, document] of Object.entries(preloadedContexts)) {
    let terms = 0;
    const pending: unknown[] = [(document as { "@context"?: unknown })["@context"]];
    while (pending.length > 0) {
      const context = pending.pop();
      if (Array.isArray(context)) pending.push(...context);
      if (typeof context !== "object" || context == null || Array.isArray(context)) continue;
      for (const [term, definition] of Object.entries(context)) {
        if (term.startsWith("@")) continue;
        terms++;
        if (typeof definition === "object" && definition != null && "@context" in definition) {
          scopedTerms.add(term);
          pending.push(definition["@context"]);
        }
      }
    }
    termCounts.set(url, terms);
  }
  return bundledContextsCache = { termCounts, scopedTerms };
}

function stringTooLong(limits: ResolvedDocumentComplexityLimits): DocumentComplexityViolation {
  return violation(
    "maxStringLength",
    limits,
    `It holds a string longer than ${limits.maxStringLength} characters.`,
  );
}

function violation(
  limit: DocumentComplexityLimit,
  limits: ResolvedDocumentComplexityLimits,
  message: string,
): DocumentComplexityViolation {
  return { limit, max: limits[limit], message: `The document is too complex: ${message}` };
}

// A remote party's doing, not a bug here: logged without a stack.
markRemoteFailureClass(DocumentTooComplexError);
