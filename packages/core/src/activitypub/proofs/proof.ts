import type { DocumentLoader } from "@fedify/vocab";
import { decodeMultibase, encodeMultibase } from "@fedify/vocab-runtime";
import type { Temporal } from "@js-temporal/polyfill";
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import {
  createPublicKeyFetcher,
  type FetchedPublicKey,
  type PublicKeyFetcher,
} from "../signatures/key-cache.ts";
import { parseKeyId } from "../signatures/verification.ts";
import type { DurationInput } from "../../time/duration.ts";
import { checkCreatedTime } from "./created-time.ts";
import { canonicalizeJson } from "./jcs.ts";
import { asArray, idOf, messageOf } from "../json-values.ts";

const logger = getLogger(["fedwork", "activitypub", "proofs"]);

// The one cryptosuite Fedwork makes and verifies, as Fedify and Mitra do:
// EdDSA (Ed25519) over JSON Canonicalization Scheme hashes.
const EDDSA_JCS_2022 = "eddsa-jcs-2022";

/**
 * An Object Integrity Proof (FEP-8b32) as it appears in an object's
 * `proof`: a W3C Data Integrity proof with the `eddsa-jcs-2022` cryptosuite.
 * @since 0.3.0
 */
export interface DataIntegrityProof {
  readonly type: "DataIntegrityProof";
  readonly cryptosuite: "eddsa-jcs-2022";
  /** The key that made it: a `Multikey` id such as `actor#multikey-1`. */
  readonly verificationMethod: string;
  readonly proofPurpose: "assertionMethod";
  /** The Ed25519 signature, multibase (base58btc, `z…`). */
  readonly proofValue: string;
  /** When it was made, as an RFC 3339 instant (`2023-02-24T23:36:38Z`). */
  readonly created: string;
}

/**
 * Options for {@link createProof} and {@link signObject}.
 * @since 0.3.0
 */
export interface CreateProofOptions {
  /** The Ed25519 private key to sign with.  Required. */
  readonly privateKey: CryptoKey;
  /**
   * The id of the public key verifiers fetch, the proof's
   * `verificationMethod`: the actor's `Multikey` id (`actor#multikey-1`),
   * which the actor lists in its `assertionMethod`.  Required.
   */
  readonly keyId: URL;
  /**
   * When the proof is made.
   * @default now, to the second
   */
  readonly created?: Temporal.Instant | Date;
}

/**
 * Why a proof was not accepted.
 * - `noProof`: the object carries no `proof`;
 * - `tooManyProofs`: it carries more than {@link MAX_PROOFS_PER_OBJECT};
 * - `malformedProof`: a proof lacks a field or has one of the wrong shape;
 * - `unsupportedCryptosuite`: it is not an `eddsa-jcs-2022` proof;
 * - `keyNotFound`: its key could not be fetched, or is not Ed25519;
 * - `invalidProof`: the key does not verify it;
 * - `unattributed`: every proof verifies, but not one of them is by an
 *   actor (or `attributedTo`) of the object;
 * - `outsideTimeWindow`: its `created` is older than `maxAge` or further
 *   in the future than `timeWindow` (since 0.4.0).
 * @since 0.3.0
 */
export type ProofFailureReason =
  | "noProof"
  | "tooManyProofs"
  | "malformedProof"
  | "unsupportedCryptosuite"
  | "keyNotFound"
  | "invalidProof"
  | "unattributed"
  | "outsideTimeWindow";

/**
 * A proof that was not accepted, and why.
 * @since 0.3.0
 */
export interface ProofFailure {
  readonly verified: false;
  /** The reason, for programs. */
  readonly reason: ProofFailureReason;
  /** The reason, for people (and logs). */
  readonly message: string;
  /** The key the proof names, when it could be read. */
  readonly keyId?: URL;
}

/**
 * The outcome of {@link verifyProof}: the key that verified the proof (its
 * `owner` is the actor that made it, when confirmed), or why not.
 * @since 0.3.0
 */
export type ProofVerification =
  | { readonly verified: true; readonly key: FetchedPublicKey }
  | ProofFailure;

/**
 * The outcome of {@link verifyObject}: the keys that verified its proofs,
 * or why not.
 * @since 0.3.0
 */
export type ObjectVerification =
  | { readonly verified: true; readonly keys: readonly FetchedPublicKey[] }
  | ProofFailure;

/**
 * Options for {@link verifyProof} and {@link verifyObject}.  Give
 * `fetchKey` (an inbox passes the federation's, so that proof keys share
 * the HTTP signatures' cache and network limits) or `documentLoader`.
 * @since 0.3.0
 */
export interface VerifyProofOptions {
  /**
   * Fetches the proof's key.
   * @default a {@link createPublicKeyFetcher} over `documentLoader` and `kv`
   */
  readonly fetchKey?: PublicKeyFetcher;
  /** Loads key documents; required without `fetchKey`. */
  readonly documentLoader?: DocumentLoader;
  /**
   * Where keys fetched through `documentLoader` are cached.
   * @default a new `MemoryKvStore` for this call
   */
  readonly kv?: KvStore;
  /**
   * The oldest `created` accepted: a proof or Linked Data signature made
   * longer ago is refused (`outsideTimeWindow`) before its key is fetched,
   * so that a signed activity cannot be replayed by a third party for
   * ever; `false` not to check age.  Mastodon does not check the age of
   * Linked Data signatures; forwarded replies are hours old, rarely days.
   * With this or `timeWindow` on, a proof without a `created` is refused.
   * @default `{ days: 7 }`
   * @since 0.4.0
   */
  readonly maxAge?: DurationInput | false;
  /**
   * How far into the future a `created` may be (clock skew), or `false` not
   * to check; an inbox passes its `signatureTimeWindow`.
   * @default `{ hours: 1 }`
   * @since 0.4.0
   */
  readonly timeWindow?: DurationInput | false;
  /**
   * The time to check `created` against.
   * @default now
   * @since 0.4.0
   */
  readonly currentTime?: Temporal.Instant;
}

/**
 * How many proofs of one object are verified at most: two.  An object
 * with more is refused before any key is fetched, so an object listing a
 * hundred proofs, each naming its own key, costs nothing.  Fedify signs
 * with each Ed25519 key of an actor (one, in practice), Fedwork with the
 * first only.
 * @since 0.3.0
 */
export const MAX_PROOFS_PER_OBJECT = 2;

// A base58btc Ed25519 signature (64 bytes) takes at most 88 characters.
const MAX_PROOF_VALUE_LENGTH = 100;

/**
 * Makes an Object Integrity Proof (FEP-8b32, `eddsa-jcs-2022`) of an
 * object: an Ed25519 signature over SHA-256 of the canonical proof options
 * followed by SHA-256 of the canonical object without its `proof`.  The
 * proof options carry the object's `@context`, as the cryptosuite
 * requires and Fedify does.  The object is not modified.
 * @param object The object, as compact JSON-LD (e.g. from `toJsonLd()`).
 * @param options The Ed25519 private key, its key id and the time.
 * @returns The proof, to put in the object's `proof`.
 * @throws {TypeError} When the object is not a JSON object (e.g. a
 *         vocabulary object: serialize it with `toJsonLd()` first), the key
 *         is not an Ed25519 private key, or the object holds something JSON
 *         cannot represent.
 * @since 0.3.0
 * @example
 * ```ts
 * import { createProof, generateCryptoKeyPair } from "@fedwork/core";
 *
 * const { privateKey } = await generateCryptoKeyPair("Ed25519");
 * const proof = await createProof({
 *   "@context": "https://www.w3.org/ns/activitystreams",
 *   type: "Note",
 *   content: "Hello",
 * }, { privateKey, keyId: new URL("https://example.com/users/alice#multikey-1") });
 * ```
 */
export async function createProof(
  object: Readonly<Record<string, unknown>>,
  options: CreateProofOptions,
): Promise<DataIntegrityProof> {
  checkJsonObject(object, "createProof");
  const { privateKey, keyId } = options ?? {};
  checkSigningKey(privateKey, keyId, "createProof", {
    algorithm: "Ed25519",
    described: 'an Ed25519 private key (e.g. from generateCryptoKeyPair("Ed25519"))',
  });
  const options_: Omit<DataIntegrityProof, "proofValue"> = {
    type: "DataIntegrityProof",
    cryptosuite: EDDSA_JCS_2022,
    verificationMethod: keyId.href,
    proofPurpose: "assertionMethod",
    created: formatInstant(options.created),
  };
  const data = await hashData(object, { ...options_, "@context": object["@context"] });
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", privateKey, data));
  return {
    ...options_,
    proofValue: new TextDecoder().decode(encodeMultibase("base58btc", signature)),
  };
}

/**
 * Signs an object: returns a copy with a new Object Integrity Proof (see
 * {@link createProof}) added to its `proof`, after any it already has.
 * @param object The object, as compact JSON-LD.  It is not modified.
 * @param options The Ed25519 private key, its key id and the time.
 * @returns The signed copy.
 * @throws {TypeError} As {@link createProof}.
 * @since 0.3.0
 * @example
 * ```ts
 * import { Create, Note } from "@fedify/vocab";
 * import { generateCryptoKeyPair, signObject } from "@fedwork/core";
 *
 * const { privateKey } = await generateCryptoKeyPair("Ed25519");
 * const create = new Create({
 *   id: new URL("https://example.com/activities/1"),
 *   actor: new URL("https://example.com/users/alice"),
 *   object: new Note({ content: "Hello" }),
 * });
 * const signed = await signObject(await create.toJsonLd() as Record<string, unknown>, {
 *   privateKey,
 *   keyId: new URL("https://example.com/users/alice#multikey-1"),
 * });
 * ```
 */
export async function signObject<T extends Readonly<Record<string, unknown>>>(
  object: T,
  options: CreateProofOptions,
): Promise<T & { readonly proof: DataIntegrityProof | readonly unknown[] }> {
  const existing = asArray(object.proof);
  const proof = await createProof(object, options);
  return { ...object, proof: existing.length === 0 ? proof : [...existing, proof] };
}

/**
 * Verifies one Object Integrity Proof of an object (`eddsa-jcs-2022`):
 * fetches the key it names, which must be Ed25519, and checks the
 * signature over the object without its `proof` (and, when that fails and
 * the object has a Linked Data `signature`, without it too: Fedify signs
 * that over the proved object).  A cached key that fails
 * is refetched once, in case it was rotated.  It does not check who owns
 * the key: {@link verifyObject} and the inbox do.
 * @param object The object, as received (parsed JSON).
 * @param proof One of its proofs.
 * @param options How to fetch the key, and how old `created` may be.
 * @returns The key, or why the proof was not accepted.
 * @throws {TypeError} When the object is not a JSON object (Fedify's
 *         `verifyObject(Activity, json)` shape included), with neither
 *         `fetchKey` nor `documentLoader`, or when `maxAge` or
 *         `timeWindow` is not a duration.
 * @since 0.3.0
 */
export async function verifyProof(
  object: Readonly<Record<string, unknown>>,
  proof: unknown,
  options: VerifyProofOptions,
): Promise<ProofVerification> {
  checkJsonObject(object, "verifyProof");
  const fetchKey = keyFetcherOf(options);
  const parsed = parseProof(proof);
  if ("verified" in parsed) return parsed;
  const { keyId, signature, config } = parsed;
  const late = checkCreatedTime(config.created, options, "proof");
  if (late != null) {
    return fail(late.kind === "malformed" ? "malformedProof" : late.kind, late.message, keyId);
  }
  const proofOptions = config["@context"] === undefined
    ? { ...config, "@context": object["@context"] }
    : config;
  // Fedify makes the proof first and then a Linked Data signature over the
  // proved activity, so what the proof covers is the activity without
  // `signature` as well; Mastodon-style senders sign the other way round.
  // Both are tried: two hashes at most, still one key fetch.
  const documents = [object];
  if (object.signature !== undefined) {
    const { signature: _, ...unsigned } = object;
    documents.push(unsigned);
  }
  let candidates: Uint8Array<ArrayBuffer>[];
  try {
    candidates = await Promise.all(documents.map((document) => hashData(document, proofOptions)));
  } catch (error) {
    return fail("malformedProof", `The object cannot be canonicalized: ${messageOf(error)}`, keyId);
  }
  let key = await fetchKey(keyId);
  for (let attempt = 0; key != null; attempt++) {
    if (key.publicKey.algorithm.name === "Ed25519") {
      for (const data of candidates) {
        if (await crypto.subtle.verify("Ed25519", key.publicKey, signature, data)) {
          return { verified: true, key };
        }
      }
    }
    // A cached key that fails may have been rotated: refetch it once.
    if (!key.cached || attempt > 0) break;
    const refreshed = await fetchKey(keyId, { refresh: true });
    if (refreshed == null) break;
    key = refreshed;
  }
  if (key == null) return fail("keyNotFound", `The key ${keyId.href} could not be fetched.`, keyId);
  if (key.publicKey.algorithm.name !== "Ed25519") {
    return fail("keyNotFound", `The key ${keyId.href} is not an Ed25519 key.`, keyId);
  }
  return fail("invalidProof", `The key ${keyId.href} does not verify the proof.`, keyId);
}

/**
 * Verifies an object's Object Integrity Proofs, as Fedify's
 * `verifyObject()` does: every proof must verify (at most
 * {@link MAX_PROOFS_PER_OBJECT}; more are refused unread), and each of the
 * object's `actor`s and `attributedTo`s must own a key that made one.
 * @param object The object, as received (parsed JSON).
 * @param options How to fetch the keys, and how old `created` may be.
 * @returns The keys that verified its proofs, or why not.
 * @throws {TypeError} When the object is not a JSON object (Fedify's
 *         `verifyObject(Activity, json)` shape included), with neither
 *         `fetchKey` nor `documentLoader`, or when `maxAge` or
 *         `timeWindow` is not a duration.
 * @since 0.3.0
 * @example
 * ```ts
 * import { createFetchDocumentLoader, verifyObject } from "@fedwork/core";
 *
 * const documentLoader = createFetchDocumentLoader({
 *   userAgent: "MyApp/1.0",
 *   allowPrivateAddress: false,
 * });
 * async function check(activity: Record<string, unknown>) {
 *   const result = await verifyObject(activity, { documentLoader });
 *   if (!result.verified) console.log(result.reason, result.message);
 * }
 * ```
 */
export async function verifyObject(
  object: Readonly<Record<string, unknown>>,
  options: VerifyProofOptions,
): Promise<ObjectVerification> {
  checkJsonObject(object, "verifyObject");
  const fetchKey = keyFetcherOf(options);
  const proofs = asArray(object.proof);
  if (proofs.length === 0) return fail("noProof", "The object carries no proof.");
  if (proofs.length > MAX_PROOFS_PER_OBJECT) {
    return fail(
      "tooManyProofs",
      `The object carries ${proofs.length} proofs; at most ${MAX_PROOFS_PER_OBJECT} are verified.`,
    );
  }
  const keys: FetchedPublicKey[] = [];
  for (const proof of proofs) {
    const result = await verifyProof(object, proof, { ...options, fetchKey });
    if (!result.verified) return result;
    keys.push(result.key);
  }
  const attributions = new Set(
    [...asArray(object.actor), ...asArray(object.attributedTo)].map((value) => {
      const id = idOf(value);
      return id != null && URL.canParse(id) ? new URL(id).href : id;
    }),
  );
  for (const key of keys) if (key.owner != null) attributions.delete(key.owner.href);
  if (attributions.size > 0) {
    const missing = [...attributions].map((id) => id ?? "an actor without an id").join(", ");
    return fail("unattributed", `No proof is made by a key of ${missing}.`);
  }
  return { verified: true, keys };
}

/** Whether an object carries a `proof` to verify.  Internal. */
export function hasProof(object: Readonly<Record<string, unknown>>): boolean {
  return asArray(object.proof).length > 0;
}

interface ParsedProof {
  readonly keyId: URL;
  readonly signature: Uint8Array<ArrayBuffer>;
  /** The proof without its value: what the signature covers with the object. */
  readonly config: Record<string, unknown>;
}

function parseProof(proof: unknown): ParsedProof | ProofFailure {
  if (typeof proof !== "object" || proof == null || Array.isArray(proof)) {
    return fail("malformedProof", "A proof is not an object.");
  }
  const { proofValue, ...config } = proof as Record<string, unknown>;
  if (config.type !== "DataIntegrityProof") {
    return fail("unsupportedCryptosuite", "A proof is not a DataIntegrityProof.");
  }
  if (config.cryptosuite !== EDDSA_JCS_2022) {
    return fail(
      "unsupportedCryptosuite",
      `The cryptosuite ${
        JSON.stringify(config.cryptosuite)
      } is not supported; only ${EDDSA_JCS_2022} is.`,
    );
  }
  const keyId = typeof config.verificationMethod === "string"
    ? parseKeyId(config.verificationMethod)
    : null;
  if (keyId == null) {
    return fail("malformedProof", "A proof's verificationMethod is not an http(s) URL.");
  }
  if (config.proofPurpose !== "assertionMethod") {
    return fail("malformedProof", "A proof's proofPurpose is not assertionMethod.", keyId);
  }
  if (config.created !== undefined && typeof config.created !== "string") {
    return fail("malformedProof", "A proof's created is not a string.", keyId);
  }
  if (
    typeof proofValue !== "string" || !proofValue.startsWith("z") ||
    proofValue.length > MAX_PROOF_VALUE_LENGTH
  ) {
    return fail(
      "malformedProof",
      "A proof's proofValue is not a base58btc multibase value.",
      keyId,
    );
  }
  let signature: Uint8Array;
  try {
    signature = decodeMultibase(proofValue);
  } catch {
    return fail("malformedProof", "A proof's proofValue is not valid base58btc.", keyId);
  }
  if (signature.length !== 64) {
    return fail("malformedProof", "A proof's proofValue is not an Ed25519 signature.", keyId);
  }
  return { keyId, signature: new Uint8Array(signature), config };
}

/**
 * The data an `eddsa-jcs-2022` signature covers: SHA-256 of the canonical
 * proof options, then SHA-256 of the canonical document without `proof`.
 */
async function hashData(
  object: Readonly<Record<string, unknown>>,
  proofOptions: Readonly<Record<string, unknown>>,
): Promise<Uint8Array<ArrayBuffer>> {
  const { proof: _, ...document } = object;
  const encoder = new TextEncoder();
  const [proofHash, documentHash] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(canonicalizeJson(proofOptions))),
    crypto.subtle.digest("SHA-256", encoder.encode(canonicalizeJson(document))),
  ]);
  const data = new Uint8Array(64);
  data.set(new Uint8Array(proofHash), 0);
  data.set(new Uint8Array(documentHash), 32);
  return data;
}

/**
 * An instant as Temporal writes it (`2023-02-24T23:36:38Z`, no trailing
 * zero digits): Fedify rebuilds the proof options from a parsed
 * `Temporal.Instant`, so `…38.000Z` would not verify there.  Internal.
 */
export function formatInstant(created: Temporal.Instant | Date | undefined): string {
  if (created == null) return formatInstant(new Date(Math.floor(Date.now() / 1000) * 1000));
  if (!(created instanceof Date)) return created.toString();
  if (Number.isNaN(created.getTime())) {
    throw new TypeError("The created option of createProof() is an invalid Date.");
  }
  return created.toISOString().replace(
    /\.(\d*?)0*Z$/,
    (_, digits: string) => digits === "" ? "Z" : `.${digits}Z`,
  );
}

/**
 * Throws unless `value` is a plain JSON object.  Fedify's functions of the
 * same names take vocabulary objects (`verifyObject(Activity, json)`,
 * `signObject(note, privateKey, keyId)`); a call ported unchanged must fail
 * loudly rather than verify or sign the wrong thing.  Internal.
 */
export function checkJsonObject(value: unknown, where: string): void {
  if (
    typeof value !== "object" || value == null || Array.isArray(value) ||
    typeof (value as { toJsonLd?: unknown }).toJsonLd === "function"
  ) {
    throw new TypeError(
      `${where}() takes an object as JSON (e.g. await activity.toJsonLd()), not ` +
        `${typeof value === "function" ? "a class" : "a vocabulary object or other value"}; ` +
        "Fedify's vocabulary-object signature is not supported.",
    );
  }
}

/**
 * Throws unless `privateKey` is a private key of `algorithm` and `keyId` a
 * URL, naming the function they were given to.  Internal.
 */
export function checkSigningKey(
  privateKey: unknown,
  keyId: unknown,
  where: string,
  expected: { readonly algorithm: string; readonly described: string },
): asserts privateKey is CryptoKey {
  if (
    !(privateKey instanceof CryptoKey) || privateKey.type !== "private" ||
    privateKey.algorithm.name !== expected.algorithm
  ) {
    throw new TypeError(`The privateKey given to ${where}() must be ${expected.described}.`);
  }
  if (!(keyId instanceof URL)) {
    throw new TypeError(`The keyId given to ${where}() must be a URL.`);
  }
}

/** The key fetcher a verifier uses: `fetchKey`, or one over `documentLoader`.  Internal. */
export function keyFetcherOf(options: VerifyProofOptions): PublicKeyFetcher {
  if (options?.fetchKey != null) return options.fetchKey;
  if (options?.documentLoader == null) {
    throw new TypeError("Verifying a proof needs the fetchKey or the documentLoader option.");
  }
  return createPublicKeyFetcher({
    documentLoader: options.documentLoader,
    kv: options.kv ?? new MemoryKvStore(),
  });
}

function fail(reason: ProofFailureReason, message: string, keyId?: URL): ProofFailure {
  logger.debug("Refused an object integrity proof: {reason}: {message}", {
    reason,
    message,
    keyId: keyId?.href,
  });
  return keyId == null
    ? { verified: false, reason, message }
    : { verified: false, reason, message, keyId };
}
