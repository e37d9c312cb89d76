/**
 * Actors' keys: generating, storing (JWK) and publishing them.
 * @module
 * @since 0.2.0
 */
export { type ActorKeyPair, buildActorKeyPairs } from "./key-pairs.ts";
export { exportJwk, generateCryptoKeyPair, importJwk, type KeyAlgorithm } from "./keys.ts";
