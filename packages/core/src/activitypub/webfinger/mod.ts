/**
 * WebFinger (RFC 7033): resolving `acct:` handles and actor URIs to actors.
 * @module
 * @since 0.2.0
 */
export type { WebFingerLink } from "./handler.ts";
export {
  lookupWebFinger,
  type LookupWebFingerOptions,
  parseFediverseHandle,
  type ResourceDescriptor,
} from "./lookup.ts";
