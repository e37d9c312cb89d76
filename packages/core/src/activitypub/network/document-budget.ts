import type { DocumentLoader, RemoteDocument } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import {
  assertWithinDocumentLimits,
  DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  type ResolvedDocumentComplexityLimits,
} from "./document-complexity.ts";
import { RemoteRequestError, RemoteTimeoutError } from "./errors.ts";
import { carryCacheParts } from "./kv-cache.ts";

/**
 * How many remote documents one activity or object may make Fedwork load
 * while it is parsed (its remote JSON-LD contexts and embedded references):
 * 8.  Real activities need none (the well-known contexts are bundled) or
 * one or two (a server's own context extension).
 * @since 0.3.0
 */
export const DEFAULT_MAX_DOCUMENT_LOADS = 8;

/**
 * How long all the loads made while parsing one document may take
 * together: 10 seconds, one request's own time limit, so that eight slow
 * contexts cost one time limit, not eight.
 * @since 0.4.0
 */
export const DEFAULT_DOCUMENT_LOAD_TIMEOUT_MS = 10_000;

/**
 * Thrown when parsing one document would load more remote documents than
 * its budget allows.
 * @since 0.3.0
 */
export class DocumentLoadBudgetError extends RemoteRequestError {
  /**
   * @param url The document that was refused.
   * @param maxLoads The budget.
   */
  constructor(url: string, maxLoads: number) {
    super(url, `Refusing to load ${url}: one document may load at most ${maxLoads} others.`);
    this.name = "DocumentLoadBudgetError";
  }
}

/**
 * The budget of {@link withDocumentLoadBudget}.
 * @since 0.4.0
 */
export interface DocumentLoadBudget {
  /**
   * How many documents may be loaded.
   * @default {@link DEFAULT_MAX_DOCUMENT_LOADS} (8)
   */
  readonly maxLoads?: number;
  /**
   * How long all the loads may take together, in milliseconds, counted
   * from the budget's creation: a load still running then is aborted, and
   * a later one refused, with a `RemoteTimeoutError` (a slow server may be
   * faster on a retry).
   * @default {@link DEFAULT_DOCUMENT_LOAD_TIMEOUT_MS} (10 s)
   */
  readonly timeoutMs?: number;
  /** Aborts every load, as a load's own `signal` does. */
  readonly signal?: AbortSignal;
  /**
   * The limits each loaded document is checked against before it is
   * returned.
   * @default {@link DEFAULT_DOCUMENT_COMPLEXITY_LIMITS}
   */
  readonly limits?: ResolvedDocumentComplexityLimits;
}

/**
 * Wraps a document loader so that at most `maxLoads` remote documents are
 * loaded through it, within `timeoutMs` all together, and each one is
 * within the document limits (refused with a {@link DocumentTooComplexError}
 * otherwise); the well-known contexts bundled with `@fedify/vocab-runtime`
 * are served without counting.  Make one per document parsed: an activity
 * listing a hundred remote `@context` URLs then costs at most `maxLoads`
 * requests, and at most `timeoutMs` of waiting in all.
 * @param loader The loader to wrap.
 * @param budget The budget, or (as before 0.4.0) just `maxLoads`.
 * @returns The budgeted loader.
 * @since 0.3.0
 */
export function withDocumentLoadBudget(
  loader: DocumentLoader,
  budget: DocumentLoadBudget | number = {},
): DocumentLoader {
  const {
    maxLoads = DEFAULT_MAX_DOCUMENT_LOADS,
    timeoutMs = DEFAULT_DOCUMENT_LOAD_TIMEOUT_MS,
    signal,
    limits = DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  } = typeof budget === "number" ? { maxLoads: budget } : budget;
  const deadline = Date.now() + timeoutMs;
  let loads = 0;
  return async (url, options) => {
    if (Object.hasOwn(preloadedContexts, url)) {
      return { documentUrl: url, document: preloadedContexts[url], contextUrl: null };
    }
    if (++loads > maxLoads) throw new DocumentLoadBudgetError(url, maxLoads);
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new RemoteTimeoutError(url, timeoutMs);
    const signals = [AbortSignal.timeout(remaining)];
    if (signal != null) signals.push(signal);
    if (options?.signal != null) signals.push(options.signal);
    const combined = AbortSignal.any(signals);
    // A loader may ignore its signal (an application's own): the budget
    // holds all the same.
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(
          signal?.aborted || options?.signal?.aborted
            ? combined.reason
            : new RemoteTimeoutError(url, timeoutMs),
        );
      combined.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const loaded = await Promise.race([loader(url, { ...options, signal: combined }), aborted]);
      assertWithinDocumentLimits(loaded.document, limits, url);
      return loaded;
    } finally {
      combined.removeEventListener("abort", onAbort!);
    }
  };
}

/**
 * Wraps a document loader so that every document it loads is checked
 * against the document limits before it is returned (a
 * {@link DocumentTooComplexError} otherwise), but for the bundled
 * contexts, which are trusted.  The federation wraps its document loader so
 * that every document it loads (keys, actors, objects, collection pages,
 * contexts) is held to the limits before any JSON-LD work.
 * @param loader The loader to wrap.
 * @param limits The limits.
 * @returns The checking loader.
 * @since 0.4.0
 */
export function withDocumentLimits(
  loader: DocumentLoader,
  limits: ResolvedDocumentComplexityLimits = DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
): DocumentLoader {
  const check = (url: string, loaded: RemoteDocument): RemoteDocument => {
    // The bundled contexts (schema.org's defines 2,700 terms) are trusted;
    // an application's loader may still serve them its own way.
    if (!Object.hasOwn(preloadedContexts, url)) {
      assertWithinDocumentLimits(loaded.document, limits, url);
    }
    return loaded;
  };
  const checked: DocumentLoader = async (url, options) => check(url, await loader(url, options));
  // A kvCache() inside keeps what the key fetcher loads unstored, checked.
  carryCacheParts(checked, loader, check);
  return checked;
}
