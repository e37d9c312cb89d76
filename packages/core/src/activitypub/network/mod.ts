/**
 * Outgoing requests: the JSON-LD document loader and the guard that keeps
 * requests away from loopback and private addresses.
 * @module
 * @since 0.2.0
 */
export { createFetchDocumentLoader, type FetchDocumentLoaderOptions } from "./document-loader.ts";
export { PrivateAddressError } from "./errors.ts";
export { assertPublicUrl, isNonPublicAddress } from "./private-address.ts";
