/**
 * Low-level HTTP plumbing shared by the inbox, remote requests and webhook
 * receivers: reading a peer's body within a size limit.  Internal: nothing
 * here is exported from `@fedwork/core`.
 * @module
 * @internal
 * @since 0.3.0
 */
export { type CappedBody, readBodyCapped } from "./capped-body.ts";
