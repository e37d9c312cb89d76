import { decodeBase64Leniently, encodeBase64 } from "./base64.ts";
import { checkDigestHeader, digestHeaderOf } from "./digest.ts";
import type { SignableMessage, SignedBody } from "./signed-body.ts";
import { type SignatureAlgorithm, signatureAlgorithmOf, signBytes } from "./spec.ts";
import {
  checkCreated,
  failure,
  isSignableHeaderName,
  parseKeyId,
  parseSignatureTime,
  type SignatureCandidate,
  type SignatureFailure,
  type VerificationClock,
} from "./verification.ts";

const encoder = new TextEncoder();

/** The draft's pseudo-headers, which name no HTTP header. */
const PSEUDO_HEADERS: ReadonlySet<string> = new Set(["(request-target)", "(created)", "(expires)"]);

/** The parameters of a Cavage `Signature` header. */
interface CavageParameters {
  readonly keyId?: string;
  readonly algorithm?: string;
  readonly headers?: string;
  readonly signature?: string;
  readonly created?: string;
  readonly expires?: string;
}

/**
 * Parses `keyId="…",algorithm="…",headers="…",signature="…"`.  Values are
 * quoted strings, except `created` and `expires`, which may be bare numbers.
 * A parameter given twice makes the header unparsable: two `Signature`
 * headers are joined into one by `Headers.get()`, and a request carries one
 * Cavage signature, not a choice of keys.
 */
function parseParameters(header: string): CavageParameters | null {
  const parameters: Record<string, string> = {};
  const pattern = /\s*([A-Za-z]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\d+))\s*(?:,|$)/y;
  let position = 0;
  while (position < header.length) {
    pattern.lastIndex = position;
    const match = pattern.exec(header);
    if (match == null || Object.hasOwn(parameters, match[1])) return null;
    parameters[match[1]] = match[2] ?? match[3];
    position = pattern.lastIndex;
  }
  return parameters;
}

function targetOf(method: string, url: URL): string {
  return `${method.toLowerCase()} ${url.pathname}${url.search}`;
}

function signingString(
  method: string,
  url: URL,
  headers: Headers,
  names: readonly string[],
  parameters: CavageParameters,
): string | SignatureFailure {
  const lines: string[] = [];
  for (const name of names) {
    let value: string | null | undefined;
    if (name === "(request-target)") value = targetOf(method, url);
    else if (name === "(created)") value = parameters.created;
    else if (name === "(expires)") value = parameters.expires;
    else if (name === "host") value = headers.get("host") ?? url.host;
    else value = headers.get(name);
    if (value == null) {
      return failure("missingRequiredComponent", `The signed header ${name} is missing.`);
    }
    lines.push(`${name}: ${value}`);
  }
  return lines.join("\n");
}

/**
 * Signs a request the way Mastodon does (draft-cavage-http-signatures-12):
 * adds `Date`, `Digest: SHA-256=…` when there is a body, and a `Signature`
 * over `(request-target) host date` (plus `digest`) with `rsa-sha256`.
 * Sets those headers on `message.headers`.
 */
export async function signHeadersDraftCavage(
  message: SignableMessage,
  privateKey: CryptoKey,
  keyId: URL,
  body: SignedBody | null,
  nowMs: number,
): Promise<void> {
  const algorithm = signatureAlgorithmOf(privateKey);
  if (algorithm !== "rsa-v1_5-sha256") {
    // Fedify 2.3.6 throws on a Cavage signature made with an Ed25519 key,
    // and Mastodon only accepts RSA: never send one.
    throw new TypeError(
      "draft-cavage HTTP signatures are made with RSASSA-PKCS1-v1_5 (SHA-256) keys only; " +
        `got a ${privateKey.algorithm.name} key.`,
    );
  }
  const { url, headers } = message;
  headers.set("Date", new Date(nowMs).toUTCString());
  const names = ["(request-target)", "host", "date"];
  if (body != null) {
    headers.set("Digest", digestHeaderOf(await body.sha256()));
    names.push("digest");
  }
  const data = signingString(message.method, url, headers, names, {}) as string;
  const signature = await signBytes(privateKey, encoder.encode(data));
  headers.set(
    "Signature",
    `keyId="${keyId.href}",algorithm="rsa-sha256",headers="${names.join(" ")}",` +
      `signature="${encodeBase64(signature)}"`,
  );
}

/**
 * Reads a Cavage signature and checks everything that needs no key:
 * Mastodon's required headers, the digest and the time window.
 * @returns The candidate to verify with the key, or why it fails.
 */
export async function prepareDraftCavage(
  request: Request,
  body: Uint8Array | null,
  clock: VerificationClock,
): Promise<SignatureCandidate | SignatureFailure> {
  let header = request.headers.get("signature");
  if (header == null) {
    const authorization = request.headers.get("authorization");
    if (authorization?.match(/^signature\s/i)) header = authorization.replace(/^\S+\s+/, "");
  }
  if (header == null) return failure("noSignature", "The request is not signed.");
  const parameters = parseParameters(header);
  if (parameters == null) {
    return failure("malformedSignature", "The Signature header cannot be parsed.");
  }
  const keyId = parameters.keyId == null ? null : parseKeyId(parameters.keyId);
  if (keyId == null) {
    return failure("malformedSignature", "The Signature header has no valid keyId.");
  }
  if (parameters.signature == null || !/^[A-Za-z0-9+/]+={0,2}$/.test(parameters.signature)) {
    return failure("malformedSignature", "The Signature header has no valid signature.", keyId);
  }
  let algorithm: SignatureAlgorithm | null;
  const named = parameters.algorithm?.toLowerCase();
  if (named === "rsa-sha256") algorithm = "rsa-v1_5-sha256";
  // hs2019 means "the algorithm of the key"; Mastodon reads it as RSA-SHA256.
  else if (named == null || named === "hs2019") algorithm = null;
  else {
    return failure("unsupportedAlgorithm", `The algorithm ${named} is not supported.`, keyId);
  }
  // The draft's default when headers is absent is "date".
  const names = (parameters.headers ?? "date").toLowerCase().split(/\s+/).filter((n) => n !== "");
  const invalid = names.find((name) => !PSEUDO_HEADERS.has(name) && !isSignableHeaderName(name));
  if (invalid != null) {
    return failure(
      "malformedSignature",
      `The signature covers ${JSON.stringify(invalid)}, which is not a header name.`,
      keyId,
    );
  }
  const created = parameters.created == null ? undefined : parseSignatureTime(parameters.created);
  const expires = parameters.expires == null ? undefined : parseSignatureTime(parameters.expires);
  if (created === null || expires === null) {
    return failure(
      "malformedSignature",
      `The ${created === null ? "created" : "expires"} parameter is not a time in seconds.`,
      keyId,
    );
  }
  // Stricter than Mastodon, which takes `digest` in place of
  // `(request-target)` and asks for `host` on GET only: a signature that
  // covers neither the path nor the host is good at every inbox (or, for
  // a GET, every resource) of every server for as long as its date is.
  // Mastodon, Fedify, Misskey and Fedwork itself sign both.
  const missing: string[] = [];
  if (!names.includes("date") && !names.includes("(created)")) missing.push("date");
  if (!names.includes("(request-target)")) missing.push("(request-target)");
  if (!names.includes("host")) missing.push("host");
  if (body != null && !names.includes("digest")) missing.push("digest");
  if (missing.length > 0) {
    return failure(
      "missingRequiredComponent",
      `The signature must cover ${missing.join(", ")}.`,
      keyId,
    );
  }
  if (names.includes("date")) {
    const date = Date.parse(request.headers.get("date") ?? "");
    if (Number.isNaN(date)) {
      return failure("missingRequiredComponent", "The Date header is missing or invalid.", keyId);
    }
    const late = checkCreated(date, clock, keyId);
    if (late != null) return late;
  }
  if (names.includes("(created)")) {
    if (created == null) {
      return failure("malformedSignature", "The created parameter is missing.", keyId);
    }
    const late = checkCreated(created * 1000, clock, keyId);
    if (late != null) return late;
  }
  if (names.includes("(expires)") && expires == null) {
    return failure("malformedSignature", "The expires parameter is missing.", keyId);
  }
  if (expires != null && expires * 1000 < clock.nowMs) {
    return failure("outsideTimeWindow", "The signature has expired.", keyId);
  }
  // Hashing the body is the dearest check that needs no key: it comes last.
  if (names.includes("digest") || body != null) {
    const digest = request.headers.get("digest");
    if (digest == null) return failure("missingDigest", "The Digest header is missing.", keyId);
    const check = await checkDigestHeader(digest, body ?? new Uint8Array());
    if (check !== "match") {
      return failure(
        check === "mismatch" ? "digestMismatch" : "missingDigest",
        check === "mismatch"
          ? "The Digest header does not match the body."
          : `The Digest header is ${check}.`,
        keyId,
      );
    }
  }
  const data = signingString(
    request.method,
    new URL(request.url),
    request.headers,
    names,
    parameters,
  );
  if (typeof data !== "string") return { ...data, keyId };
  return {
    spec: "draft-cavage-http-signatures-12",
    keyId,
    algorithm,
    data: encoder.encode(data),
    signature: decodeBase64Leniently(parameters.signature),
  };
}
