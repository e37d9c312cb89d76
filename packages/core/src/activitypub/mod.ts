/**
 * ActivityPub over HTTP, the building blocks: HTTP signatures, actors'
 * keys and the network guard.  Nothing here depends on `Federation`.
 * @module
 * @since 0.2.0
 */
export * from "./network/mod.ts";
export * from "./signatures/mod.ts";
export * from "./proofs/mod.ts";
export * from "./actors/mod.ts";
export * from "./http/mod.ts";
export * from "./webfinger/mod.ts";
export * from "./nodeinfo/mod.ts";
export * from "./outbox/mod.ts";
export * from "./inbox/mod.ts";
export * from "./collections/mod.ts";
