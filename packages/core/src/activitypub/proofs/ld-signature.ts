import { preloadedContexts } from "@fedify/vocab-runtime";
import jsonld from "@fedify/vocab-runtime/jsonld";
import type { Temporal } from "@js-temporal/polyfill";
import { getLogger } from "@logtape/logtape";
import type { FetchedPublicKey } from "../signatures/key-cache.ts";
import { parseKeyId } from "../signatures/verification.ts";
import { decodeBase64Strictly, encodeBase64 } from "../signatures/base64.ts";
import {
  checkJsonObject,
  checkSigningKey,
  formatInstant,
  keyFetcherOf,
  type VerifyProofOptions,
} from "./proof.ts";
import { asArray, idOf, messageOf } from "../json-values.ts";
import {
  checkDocumentComplexity,
  DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  resolveDocumentComplexityLimits,
} from "../network/document-complexity.ts";
import { checkCreatedTime } from "./created-time.ts";

const logger = getLogger(["fedwork", "activitypub", "proofs"]);

const IDENTITY_CONTEXT = "https://w3id.org/identity/v1";
const AS = "https://www.w3.org/ns/activitystreams#";

/**
 * How long the JSON-LD work of verifying one document (canonicalizing the
 * signature options and the document, and expanding it) may take in all,
 * in milliseconds.  URDNA2015 is bounded by `maxWorkFactor` (left at its
 * default, 1) too; the time limit is for documents large enough to be slow
 * anyway.
 */
const CANONIZE_TIME_LIMIT_MS = 2_000;

/**
 * The document limits of a document whose Linked Data signature is
 * verified: the defaults, with at most 2,000 JSON values (a Mastodon
 * `Create` of a note with its signature has about a hundred), because
 * canonicalization costs about 0.3 ms a value and grows faster than
 * linearly: 5,000 addressees took 3.7 s.
 */
const LD_SIGNED_DOCUMENT_LIMITS = resolveDocumentComplexityLimits({
  ...DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  maxValues: 2_000,
});

// An RSA-8192 signature is 1,368 base64 characters.
const MAX_SIGNATURE_VALUE_LENGTH = 1_400;

/**
 * A Linked Data Signature as Mastodon makes it: an `RsaSignature2017` in an
 * activity's `signature`.
 * @since 0.3.0
 */
export interface LinkedDataSignature {
  readonly type: "RsaSignature2017";
  /** The key that made it, e.g. `https://example.com/users/alice#main-key`. */
  readonly creator: string;
  /** When it was made, as an RFC 3339 instant. */
  readonly created: string;
  /** The RSASSA-PKCS1-v1_5 (SHA-256) signature, base64. */
  readonly signatureValue: string;
}

/**
 * Options for {@link signJsonLd}.
 * @since 0.3.0
 */
export interface SignJsonLdOptions {
  /**
   * When the signature is made.
   * @default now, to the second
   */
  readonly created?: Temporal.Instant | Date;
}

/**
 * Why a Linked Data Signature was not accepted.
 * - `noSignature`: the document has no `signature`;
 * - `malformedSignature`: it lacks a field or has one of the wrong shape;
 * - `unsupportedSignature`: it is not an `RsaSignature2017`;
 * - `unsupportedContext`: the document names a JSON-LD context Fedwork does
 *   not know (only preloaded contexts are used: verifying never fetches
 *   one), or cannot be canonicalized in time;
 * - `tooComplex`: the document is past the document limits, or has more
 *   than 2,000 JSON values (since 0.4.0);
 * - `keyNotFound`: the key could not be fetched, or is not an RSA key;
 * - `invalidSignature`: the key does not verify the signature;
 * - `idMismatch`: the document's JSON `id` is not the `@id` JSON-LD reads
 *   (and the signature covers), e.g. an `id` term redefined by an inline
 *   context (since 0.4.0);
 * - `unattributed`: it verifies, but the key's owner is not every `actor`
 *   and `attributedTo` of the document, read as JSON and as JSON-LD alike;
 * - `outsideTimeWindow`: its `created` is older than `maxAge` or further in
 *   the future than `timeWindow` (since 0.4.0).
 * @since 0.3.0
 */
export type LdSignatureFailureReason =
  | "noSignature"
  | "malformedSignature"
  | "unsupportedSignature"
  | "unsupportedContext"
  | "tooComplex"
  | "keyNotFound"
  | "invalidSignature"
  | "idMismatch"
  | "unattributed"
  | "outsideTimeWindow";

/**
 * The outcome of {@link verifyLdSignature}: the key that made the signature,
 * or why it was not accepted.
 * @since 0.3.0
 */
export type LdSignatureVerification =
  | { readonly verified: true; readonly key: FetchedPublicKey }
  | {
    readonly verified: false;
    readonly reason: LdSignatureFailureReason;
    readonly message: string;
    readonly keyId?: URL;
  };

/**
 * Signs a JSON-LD document with a Linked Data Signature (`RsaSignature2017`),
 * as Mastodon and Fedify do: an RSASSA-PKCS1-v1_5 signature over the
 * hex SHA-256 digests of the URDNA2015-canonicalized signature options and
 * document.  Only preloaded JSON-LD contexts are used.
 * @param jsonLd The document, as compact JSON-LD.  It is not modified.
 * @param privateKey The actor's RSA private key.
 * @param keyId Its key id (`actor#main-key`), the signature's `creator`.
 * @param options The time.
 * @returns A copy with the signature in `signature` (replacing any).
 * @throws {TypeError} When the document is not a JSON object, the key is
 *         not an RSASSA-PKCS1-v1_5 private key, or the document names a
 *         context that is not preloaded.
 * @since 0.3.0
 * @example
 * ```ts
 * import { generateCryptoKeyPair, signJsonLd } from "@fedwork/core";
 *
 * const { privateKey } = await generateCryptoKeyPair();
 * const signed = await signJsonLd({
 *   "@context": "https://www.w3.org/ns/activitystreams",
 *   id: "https://example.com/activities/1",
 *   type: "Create",
 *   actor: "https://example.com/users/alice",
 *   object: { type: "Note", content: "Hello" },
 * }, privateKey, new URL("https://example.com/users/alice#main-key"));
 * ```
 */
export async function signJsonLd<T extends Readonly<Record<string, unknown>>>(
  jsonLd: T,
  privateKey: CryptoKey,
  keyId: URL,
  options: SignJsonLdOptions = {},
): Promise<Omit<T, "signature"> & { readonly signature: LinkedDataSignature }> {
  checkJsonObject(jsonLd, "signJsonLd");
  checkSigningKey(privateKey, keyId, "signJsonLd", {
    algorithm: "RSASSA-PKCS1-v1_5",
    described: "an RSASSA-PKCS1-v1_5 private key (e.g. from generateCryptoKeyPair())",
  });
  const signatureOptions = { creator: keyId.href, created: formatInstant(options.created) };
  const { signature: _, ...document } = jsonLd;
  let data: Uint8Array<ArrayBuffer>;
  try {
    data = await signedData(signatureOptions, document);
  } catch (error) {
    throw new TypeError(`The document cannot be canonicalized: ${messageOf(error)}`);
  }
  const signature = new Uint8Array(
    await crypto.subtle.sign("RSASSA-PKCS1-v1_5", privateKey, data),
  );
  return {
    ...document,
    signature: {
      type: "RsaSignature2017",
      ...signatureOptions,
      signatureValue: encodeBase64(signature),
    },
  } as Omit<T, "signature"> & { readonly signature: LinkedDataSignature };
}

/**
 * Verifies a document's Linked Data Signature (`RsaSignature2017`): fetches
 * the `creator` key (RSA), canonicalizes the signature options and the
 * document with URDNA2015 using preloaded contexts only (never fetching
 * one), checks the signature, refetching a cached key once when it fails,
 * and checks that the key's owner is each `actor` and `attributedTo` of
 * the document, both as its JSON says and as JSON-LD reads it (so that an
 * inline context cannot make the two disagree).
 * @param jsonLd The document, as received (parsed JSON).
 * @param options How to fetch the key, and how old `created` may be.
 * @returns The key, or why the signature was not accepted.
 * @throws {TypeError} When the document is not a JSON object, or with
 *         neither `fetchKey` nor `documentLoader`, or when `maxAge` or
 *         `timeWindow` is not a duration.
 * @since 0.3.0
 */
export async function verifyLdSignature(
  jsonLd: Readonly<Record<string, unknown>>,
  options: VerifyProofOptions,
): Promise<LdSignatureVerification> {
  checkJsonObject(jsonLd, "verifyLdSignature");
  const fetchKey = keyFetcherOf(options);
  const { signature: raw, ...document } = jsonLd;
  if (raw === undefined) return fail("noSignature", "The document has no signature.");
  if (typeof raw !== "object" || raw == null || Array.isArray(raw)) {
    return fail("malformedSignature", "The signature is not an object.");
  }
  const { type, id: _, signatureValue, ...signatureOptions } = raw as Record<string, unknown>;
  if (type !== "RsaSignature2017") {
    return fail(
      "unsupportedSignature",
      `The signature type ${JSON.stringify(type)} is not supported.`,
    );
  }
  const keyId = typeof signatureOptions.creator === "string"
    ? parseKeyId(signatureOptions.creator)
    : null;
  if (keyId == null) {
    return fail("malformedSignature", "The signature's creator is not an http(s) URL.");
  }
  if (typeof signatureOptions.created !== "string") {
    return fail("malformedSignature", "The signature's created is not a string.", keyId);
  }
  const late = checkCreatedTime(signatureOptions.created, options, "Linked Data signature");
  if (late != null) {
    return fail(late.kind === "malformed" ? "malformedSignature" : late.kind, late.message, keyId);
  }
  const signature = typeof signatureValue === "string" &&
      signatureValue.length <= MAX_SIGNATURE_VALUE_LENGTH
    ? decodeBase64Strictly(signatureValue)
    : null;
  if (signature == null) {
    return fail("malformedSignature", "The signatureValue is not base64.", keyId);
  }
  // Canonicalization costs far more per value than parsing (about 0.3 ms
  // a value, growing faster than linearly with many values of one
  // property): a document larger than any real signed activity is refused
  // before any of it, and before its key is fetched.
  const complexity = checkDocumentComplexity(document, LD_SIGNED_DOCUMENT_LIMITS);
  if (complexity != null) {
    return fail("tooComplex", `${complexity.message} (Linked Data signatures)`, keyId);
  }
  const unknown = unknownContextOf(document);
  if (unknown != null) {
    return fail(
      "unsupportedContext",
      `The document names the JSON-LD context ${unknown}, which Fedwork does not know.`,
      keyId,
    );
  }
  // The key first: a signature whose key cannot be had costs no
  // canonicalization.
  let key = await fetchKey(keyId);
  if (key == null) return fail("keyNotFound", `The key ${keyId.href} could not be fetched.`, keyId);
  let data: Uint8Array<ArrayBuffer>;
  let expanded: ExpandedIdentity;
  try {
    // One time budget for every JSON-LD step of the document.
    const deadline = Date.now() + CANONIZE_TIME_LIMIT_MS;
    data = await signedData(signatureOptions, document, deadline);
    expanded = await expandedIdentity(document, deadline);
  } catch (error) {
    return fail(
      "unsupportedContext",
      `The document cannot be canonicalized: ${messageOf(error)}`,
      keyId,
    );
  }
  // The signature covers the document as JSON-LD reads it; the inbox
  // deduplicates and listeners act by its JSON `id`.  The two must be one,
  // or a forwarder could send a genuine activity under any `id`.
  const jsonId = document.id === undefined ? null : normalizedId(idOf(document.id));
  if (expanded.id !== jsonId) {
    return fail(
      "idMismatch",
      `The document's id is ${jsonId ?? "missing"}, but the signed document's is ${
        expanded.id ?? "missing"
      }.`,
      keyId,
    );
  }
  const rdfAttributions = expanded.attributions;
  let verified = false;
  for (let attempt = 0;; attempt++) {
    if (
      key.publicKey.algorithm.name === "RSASSA-PKCS1-v1_5" &&
      await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key.publicKey, signature, data)
    ) {
      verified = true;
      break;
    }
    // A cached key that fails may have been rotated: refetch it once.
    if (!key.cached || attempt > 0) break;
    const refreshed = await fetchKey(keyId, { refresh: true });
    if (refreshed == null) break;
    key = refreshed;
  }
  if (!verified) {
    return key.publicKey.algorithm.name === "RSASSA-PKCS1-v1_5"
      ? fail("invalidSignature", `The key ${keyId.href} does not verify the signature.`, keyId)
      : fail("keyNotFound", `The key ${keyId.href} is not an RSA key.`, keyId);
  }
  const jsonAttributions = new Set(
    [...asArray(document.actor), ...asArray(document.attributedTo)].map((value) =>
      normalizedId(idOf(value))
    ),
  );
  const owner = key.owner?.href ?? null;
  const all = [...jsonAttributions, ...rdfAttributions];
  if (
    owner == null || jsonAttributions.size !== rdfAttributions.size ||
    all.some((id) => id !== owner)
  ) {
    return fail(
      "unattributed",
      `The signature is made by ${owner ?? "a key without a known owner"}, not by ${
        all.join(", ") || "the document's actor"
      }.`,
      keyId,
    );
  }
  return { verified: true, key };
}

/**
 * Verifies a document's Linked Data Signature, as Fedify's `verifyJsonLd()`
 * does: `true` when {@link verifyLdSignature} accepts it.
 * @param jsonLd The document, as received (parsed JSON).
 * @param options How to fetch the key.
 * @returns Whether the signature verifies and is by the document's actor.
 * @throws {TypeError} With neither `fetchKey` nor `documentLoader`.
 * @since 0.3.0
 */
export async function verifyJsonLd(
  jsonLd: Readonly<Record<string, unknown>>,
  options: VerifyProofOptions,
): Promise<boolean> {
  return (await verifyLdSignature(jsonLd, options)).verified;
}

/**
 * What an `RsaSignature2017` covers: the hex SHA-256 of the canonical
 * signature options (in the identity context) followed by that of the
 * canonical document, as UTF-8.
 */
async function signedData(
  signatureOptions: Readonly<Record<string, unknown>>,
  document: Readonly<Record<string, unknown>>,
  deadline = Date.now() + CANONIZE_TIME_LIMIT_MS,
): Promise<Uint8Array<ArrayBuffer>> {
  const [optionsHash, documentHash] = [
    await hashJsonLd({ ...signatureOptions, "@context": IDENTITY_CONTEXT }, deadline),
    await hashJsonLd(document, deadline),
  ];
  return new TextEncoder().encode(optionsHash + documentHash);
}

async function hashJsonLd(
  document: Readonly<Record<string, unknown>>,
  deadline: number,
): Promise<string> {
  const canonical: string = await jsonld.canonize(
    document as Parameters<typeof jsonld.canonize>[0],
    {
      format: "application/n-quads",
      documentLoader: loadPreloadedContext,
      // Mastodon drops terms its contexts do not define rather than failing.
      safe: false,
      canonizeOptions: {
        algorithm: "URDNA2015",
        signal: AbortSignal.timeout(remainingTime(deadline)),
      },
    } as Parameters<typeof jsonld.canonize>[1],
  );
  remainingTime(deadline);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** What JSON-LD expansion reads of a document: its `@id` and its attributions. */
interface ExpandedIdentity {
  /** The one top-level node's `@id`, or `null` without one. */
  readonly id: string | null;
  /** Its `actor`s and `attributedTo`s. */
  readonly attributions: Set<string>;
}

async function expandedIdentity(
  document: Readonly<Record<string, unknown>>,
  deadline: number,
): Promise<ExpandedIdentity> {
  remainingTime(deadline);
  const expanded = await jsonld.expand(
    document as Parameters<typeof jsonld.canonize>[0],
    {
      documentLoader: loadPreloadedContext,
      safe: false,
    } as Parameters<typeof jsonld.expand>[1],
  ) as Record<string, unknown>[];
  remainingTime(deadline);
  const ids = new Set<string>();
  for (const node of expanded) {
    for (const property of [`${AS}actor`, `${AS}attributedTo`]) {
      for (const value of asArray(node[property])) ids.add(normalizedId(idOf(value, "@id")));
    }
  }
  // A document that expands to several nodes (an @graph) has no one id.
  const id = expanded.length === 1 && typeof expanded[0]["@id"] === "string"
    ? normalizedId(expanded[0]["@id"])
    : expanded.length > 1
    ? "(several nodes)"
    : null;
  return { id, attributions: ids };
}

/** The milliseconds left before `deadline`; throws when none are. */
function remainingTime(deadline: number): number {
  const remaining = deadline - Date.now();
  if (remaining <= 0) {
    throw new Error(`JSON-LD processing took more than ${CANONIZE_TIME_LIMIT_MS} ms.`);
  }
  return remaining;
}

/**
 * The first context URL of the document (at any depth) that is not bundled,
 * or `null`; within the document limits, checked before, so bounded.
 */
function unknownContextOf(document: unknown): string | null {
  const pending: [unknown, boolean][] = [[document, false]];
  while (pending.length > 0) {
    const [value, isContext] = pending.pop()!;
    if (isContext && typeof value === "string") {
      if (!Object.hasOwn(preloadedContexts, value)) return value;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push([item, isContext]);
    } else if (typeof value === "object" && value != null) {
      for (const [key, child] of Object.entries(value)) pending.push([child, key === "@context"]);
    }
  }
  return null;
}

// Verifying never fetches a context: a hostile document could otherwise make
// the verifier fetch anything, and contexts change what is signed.
// deno-lint-ignore require-await
async function loadPreloadedContext(url: string) {
  if (!Object.hasOwn(preloadedContexts, url)) {
    throw new Error(`The JSON-LD context ${url} is not one Fedwork knows.`);
  }
  return { contextUrl: null, documentUrl: url, document: preloadedContexts[url] };
}

function fail(
  reason: LdSignatureFailureReason,
  message: string,
  keyId?: URL,
): LdSignatureVerification {
  logger.debug("Refused a Linked Data signature: {reason}: {message}", {
    reason,
    message,
    keyId: keyId?.href,
  });
  return keyId == null
    ? { verified: false, reason, message }
    : { verified: false, reason, message, keyId };
}

function normalizedId(id: string | null): string {
  if (id == null) return "(no id)";
  return URL.canParse(id) ? new URL(id).href : id;
}
