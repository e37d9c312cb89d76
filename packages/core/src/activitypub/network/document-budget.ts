import type { DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { RemoteRequestError } from "./errors.ts";

/**
 * How many remote documents one activity or object may make Fedwork load
 * while it is parsed (its remote JSON-LD contexts and embedded references):
 * 8.  Real activities need none (the well-known contexts are bundled) or
 * one or two (a server's own context extension).
 * @since 0.3.0
 */
export const DEFAULT_MAX_DOCUMENT_LOADS = 8;

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
 * Wraps a document loader so that at most `maxLoads` remote documents are
 * loaded through it; the well-known contexts bundled with
 * `@fedify/vocab-runtime` are served without counting.  Make one per
 * document parsed: an activity listing a hundred remote `@context` URLs
 * then costs at most `maxLoads` requests, each within its own time limit.
 * @param loader The loader to wrap.
 * @param maxLoads The budget.
 * @returns The budgeted loader.
 * @since 0.3.0
 */
export function withDocumentLoadBudget(
  loader: DocumentLoader,
  maxLoads: number = DEFAULT_MAX_DOCUMENT_LOADS,
): DocumentLoader {
  let loads = 0;
  return (url, options) => {
    if (Object.hasOwn(preloadedContexts, url)) {
      return Promise.resolve({
        documentUrl: url,
        document: preloadedContexts[url],
        contextUrl: null,
      });
    }
    if (++loads > maxLoads) return Promise.reject(new DocumentLoadBudgetError(url, maxLoads));
    return loader(url, options);
  };
}
