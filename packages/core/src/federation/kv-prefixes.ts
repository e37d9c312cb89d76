import type { KvKey } from "../kv/kv-store.ts";
import type { KeyPrefixRewrite } from "../kv/key-prefixes.ts";
import { assertKnownOptions } from "../options/known-options.ts";
import { FederationOptionError } from "./errors.ts";

/**
 * Where the federation keeps its records in the KvStore, Fedify's type of
 * the same name: the `kvPrefixes` option of `createFederation()` takes any
 * of them, to share one store between apps or to keep a Fedify app's
 * layout.  The defaults are Fedwork's own keys (Fedify's are under
 * `["_fedify", …]`).
 * @since 0.4.0
 */
export interface FederationKvPrefixes {
  /**
   * Activities already received (inbox idempotence).
   * @default `["fedwork", "activity-idempotence"]`
   */
  readonly activityIdempotence: KvKey;
  /**
   * Remote JSON-LD documents.  Fedwork's federation keeps none in the
   * store (wrap a loader in `kvCache()` for that, with its own `prefix`);
   * accepted for Fedify's sake.
   * @default `["_fedwork", "remoteDocument"]`
   */
  readonly remoteDocument: KvKey;
  /**
   * Public keys fetched to verify signatures.
   * @default `["fedwork", "public-key"]`
   */
  readonly publicKey: KvKey;
  /**
   * The signature scheme each origin accepted (the double knock).
   * @default `["fedwork", "http-signature-spec"]`
   */
  readonly httpMessageSignaturesSpec: KvKey;
  /**
   * The nonces of `Accept-Signature` challenges (`inboxChallengePolicy`).
   * @default `["_fedwork", "acceptSignatureNonce"]`
   */
  readonly acceptSignatureNonce: KvKey;
  /**
   * Fedify's circuit breaker state.  Fedwork has no circuit breaker (its
   * `hostHealth` records are its own); accepted for Fedify's sake.
   * @default `["fedwork", "circuit"]`
   */
  readonly circuitBreaker: KvKey;
}

/**
 * The default of each prefix.  Internal.
 * @since 0.4.0
 */
export const DEFAULT_KV_PREFIXES: FederationKvPrefixes = {
  activityIdempotence: ["fedwork", "activity-idempotence"],
  remoteDocument: ["_fedwork", "remoteDocument"],
  publicKey: ["fedwork", "public-key"],
  httpMessageSignaturesSpec: ["fedwork", "http-signature-spec"],
  acceptSignatureNonce: ["_fedwork", "acceptSignatureNonce"],
  circuitBreaker: ["fedwork", "circuit"],
};

const NAMES = Object.keys(DEFAULT_KV_PREFIXES) as (keyof FederationKvPrefixes)[];

/** The longest prefix accepted, in parts. */
const MAX_PREFIX_PARTS = 16;

/**
 * Checks the `kvPrefixes` option and tells which keys move where.
 * Internal.
 * @param option The option's value.
 * @returns The rewrites for `withKeyPrefixes()`; empty without the option.
 * @throws {UnknownOptionError} When a name is unknown ("did you mean").
 * @throws {FederationOptionError} When a prefix is not a non-empty array
 *         of strings, or one prefix starts another.
 * @since 0.4.0
 */
export function resolveKvPrefixes(
  option: Partial<FederationKvPrefixes> | undefined,
): KeyPrefixRewrite[] {
  if (option == null) return [];
  if (typeof option !== "object" || Array.isArray(option)) {
    throw new FederationOptionError(
      "kvPrefixes",
      "The kvPrefixes option must be an object such as " +
        '{ activityIdempotence: ["myapp", "idempotence"] }.',
    );
  }
  assertKnownOptions(option, NAMES, { prefix: "kvPrefixes." });
  const rewrites: KeyPrefixRewrite[] = [];
  for (const name of NAMES) {
    const to = option[name] ?? DEFAULT_KV_PREFIXES[name];
    if (
      !Array.isArray(to) || to.length === 0 || to.length > MAX_PREFIX_PARTS ||
      !to.every((part) => typeof part === "string")
    ) {
      throw new FederationOptionError(
        `kvPrefixes.${name}`,
        `The kvPrefixes.${name} option must be an array of 1 to ${MAX_PREFIX_PARTS} strings, ` +
          `such as ${JSON.stringify(DEFAULT_KV_PREFIXES[name])}.`,
      );
    }
    rewrites.push({ from: DEFAULT_KV_PREFIXES[name], to });
  }
  // Two kinds of record under one prefix could be read as each other.
  for (const [i, a] of rewrites.entries()) {
    for (const b of rewrites.slice(i + 1)) {
      const [short, long] = a.to.length <= b.to.length ? [a.to, b.to] : [b.to, a.to];
      if (short.every((part, k) => long[k] === part)) {
        throw new FederationOptionError(
          "kvPrefixes",
          `The kvPrefixes ${JSON.stringify(a.to)} and ${JSON.stringify(b.to)} overlap; give ` +
            "each kind of record a prefix of its own.",
        );
      }
    }
  }
  return rewrites;
}
