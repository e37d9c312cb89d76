/**
 * Outgoing requests: the one module every remote request goes through
 * (`fetchRemote()`, with its time, size and redirect limits), the JSON-LD
 * document loader on top of it, the limits every remote document is held to
 * before JSON-LD processing, and the guard that keeps requests away from
 * loopback and private addresses.
 * @module
 * @since 0.2.0
 */
export { DocumentLoadBudgetError } from "./document-budget.ts";
export {
  checkDocumentComplexity,
  DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  type DocumentComplexityLimit,
  type DocumentComplexityLimits,
  type DocumentComplexityViolation,
  DocumentTooComplexError,
} from "./document-complexity.ts";
export type { FederationRemoteDocumentOptions } from "./remote-document-options.ts";
export { createFetchDocumentLoader, type FetchDocumentLoaderOptions } from "./document-loader.ts";
export {
  PrivateAddressError,
  RemoteBodyTooLargeError,
  RemoteRequestError,
  RemoteTimeoutError,
  TooManyRedirectsError,
  UnacceptableContentTypeError,
} from "./errors.ts";
export { kvCache, type KvCacheParameters } from "./kv-cache.ts";
export {
  fetchRemote,
  type FetchRemoteOptions,
  type RemoteRequestLimits,
  type RemoteResponse,
} from "./outgoing-http.ts";
export { assertPublicUrl, isNonPublicAddress } from "./private-address.ts";
