/**
 * Actors' keys: generating, storing (JWK) and publishing them.
 * @module
 * @since 0.2.0
 */
export { type ActorKeyPair, buildActorKeyPairs } from "./key-pairs.ts";
export { exportJwk, generateCryptoKeyPair, importJwk, type KeyAlgorithm } from "./keys.ts";
// Fedify re-exports these from @fedify/vocab-runtime, which Fedwork already
// uses to read keys; the same functions keep PEM and SPKI handling identical.
export { exportSpki, importPem, importSpki } from "@fedify/vocab-runtime";
