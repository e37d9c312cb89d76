import type { Temporal } from "@js-temporal/polyfill";
import { signHeadersDraftCavage } from "./draft-cavage.ts";
import { type Rfc9421SignRequestOptions, signHeadersRfc9421 } from "./rfc9421.ts";
import { type SignableMessage, SignedBody } from "./signed-body.ts";
import type { HttpSignatureSpec } from "./spec.ts";

/**
 * Options for {@link signRequest}.
 * @since 0.2.0
 */
export interface SignRequestOptions {
  /**
   * The signature scheme.
   * @default `"draft-cavage-http-signatures-12"` (as in Fedify)
   */
  readonly spec?: HttpSignatureSpec;
  /**
   * The time to sign at.
   * @default now
   */
  readonly currentTime?: Temporal.Instant;
  /**
   * The request's body, when the caller already has it; saves cloning and
   * reading the request.
   */
  readonly body?: Uint8Array | ArrayBuffer | null;
  /**
   * The label, components and parameters of an RFC 9421 signature, e.g.
   * what an `Accept-Signature` challenge asked for
   * (`fulfillAcceptSignature()`); ignored with draft-cavage.
   * @since 0.4.0
   */
  readonly rfc9421?: Rfc9421SignRequestOptions;
}

/**
 * Reads a request's body without consuming the request.
 * @param request The request.
 * @returns The body's bytes, or `null` for a request without a body (and
 *          for an empty GET or HEAD).
 * @since 0.2.0
 */
export async function readRequestBody(request: Request): Promise<Uint8Array | null> {
  if (request.body == null) return null;
  const body = new Uint8Array(await request.clone().arrayBuffer());
  const method = request.method.toUpperCase();
  return body.length === 0 && (method === "GET" || method === "HEAD") ? null : body;
}

/**
 * Signs a request, returning a new request with the signature headers:
 * - `draft-cavage-http-signatures-12`: `Date`, `Digest: SHA-256=…` (with a
 *   body) and `Signature` over `(request-target) host date [digest]` with
 *   `rsa-sha256`, exactly as Mastodon signs; RSA keys only;
 * - `rfc9421`: `Date`, `Content-Digest: sha-256=:…:` (with a body),
 *   `Signature-Input` covering `"@method" "@target-uri" "@authority"
 *   ["content-digest"] "date"` (or the `rfc9421` option's components) with
 *   `alg`, `keyid` and `created`, and `Signature`; RSA
 *   (`rsa-v1_5-sha256`) or Ed25519 keys.
 *
 * Sign at sending time, on every attempt: the signature is only valid
 * within the receiver's time window.
 * @param request The request to sign.
 * @param privateKey The signer's private key.
 * @param keyId The id of the matching public key, e.g.
 *              `https://example.com/users/alice#main-key`.
 * @param options The scheme, the time and the body.
 * @returns The signed request.
 * @throws {TypeError} When the key cannot sign with the scheme, or the
 *         `rfc9421` option asks for a component the request lacks or
 *         Fedwork cannot compute.
 * @since 0.2.0
 * @example
 * ```ts
 * import { generateCryptoKeyPair, signRequest } from "@fedwork/core";
 *
 * const { privateKey } = await generateCryptoKeyPair();
 * const signed = await signRequest(
 *   new Request("https://remote.example/inbox", {
 *     method: "POST",
 *     headers: { "Content-Type": "application/activity+json" },
 *     body: JSON.stringify({ type: "Follow" }),
 *   }),
 *   privateKey,
 *   new URL("https://example.com/users/alice#main-key"),
 *   { spec: "rfc9421" },
 * );
 * ```
 */
export async function signRequest(
  request: Request,
  privateKey: CryptoKey,
  keyId: URL,
  options: SignRequestOptions = {},
): Promise<Request> {
  const bytes = options.body === undefined
    ? await readRequestBody(request)
    : options.body == null
    ? null
    : new Uint8Array(options.body);
  return signRequestWithBody(
    request,
    privateKey,
    keyId,
    options.spec ?? "draft-cavage-http-signatures-12",
    bytes == null ? null : new SignedBody(bytes as Uint8Array<ArrayBuffer>),
    options.currentTime?.epochMilliseconds ?? Date.now(),
    options.rfc9421,
  );
}

/**
 * {@link signRequest} for a caller that holds the body as a
 * {@link SignedBody}, so that its digest is hashed once for many requests.
 * Internal.
 */
export async function signRequestWithBody(
  request: Request,
  privateKey: CryptoKey,
  keyId: URL,
  spec: HttpSignatureSpec,
  body: SignedBody | null,
  nowMs: number,
  rfc9421?: Rfc9421SignRequestOptions,
): Promise<Request> {
  const message = {
    method: request.method,
    url: new URL(request.url),
    headers: new Headers(request.headers),
  };
  await signHeaders(message, privateKey, keyId, spec, body, nowMs, rfc9421);
  return new Request(request, { headers: message.headers, body: body?.bytes ?? null });
}

/**
 * Signs a request's headers in place with the `spec` scheme: the outbox
 * and the document loader sign this way, for both knocks and every inbox
 * of a fan-out, with no `Request` object.  Internal.
 * @throws {TypeError} When `spec` is unknown, or the key cannot sign with it.
 */
export function signHeaders(
  message: SignableMessage,
  privateKey: CryptoKey,
  keyId: URL,
  spec: HttpSignatureSpec,
  body: SignedBody | null,
  nowMs: number,
  rfc9421?: Rfc9421SignRequestOptions,
): Promise<void> {
  if (spec === "rfc9421") {
    return signHeadersRfc9421(message, privateKey, keyId, body, nowMs, rfc9421);
  }
  if (spec === "draft-cavage-http-signatures-12") {
    return signHeadersDraftCavage(message, privateKey, keyId, body, nowMs);
  }
  throw new TypeError(
    `Unknown HTTP signature spec ${JSON.stringify(spec)}; use "rfc9421" or ` +
      '"draft-cavage-http-signatures-12".',
  );
}
