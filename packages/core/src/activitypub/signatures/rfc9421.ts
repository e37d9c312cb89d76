import {
  type BareItem,
  type InnerList,
  type Item,
  parseDictionary,
  serializeDictionary,
  serializeInnerList,
} from "structured-headers";
import { encodeBase64 } from "./base64.ts";
import { checkContentDigestHeader, contentDigestHeaderOf } from "./digest.ts";
import type { AcceptSignatureComponent } from "./accept-signature.ts";
import type { SignableMessage, SignedBody } from "./signed-body.ts";
import { type SignatureAlgorithm, signatureAlgorithmOf, signBytes } from "./spec.ts";
import {
  checkCreated,
  failure,
  isSignableHeaderName,
  MAX_SIGNATURES_PER_REQUEST,
  parseKeyId,
  parseSignatureTime,
  type SignatureCandidate,
  type SignatureFailure,
  type VerificationClock,
} from "./verification.ts";

const encoder = new TextEncoder();

// RFC 8941 structured fields are parsed and serialized with the
// `structured-headers` package: the signature base must contain the exact
// canonical serialization of the Signature-Input member, which a hand-made
// parser would easily get subtly wrong (escapes, parameters, whitespace).

/** The value of one covered component, or `null` when it is absent. */
function componentValue(name: string, method: string, url: URL, headers: Headers): string | null {
  switch (name) {
    case "@method":
      return method.toUpperCase();
    case "@target-uri":
      return url.href;
    case "@authority":
      return url.host.toLowerCase();
    case "@scheme":
      return url.protocol.slice(0, -1);
    case "@request-target":
      return `${url.pathname}${url.search}`;
    case "@path":
      return url.pathname;
    case "@query":
      return url.search === "" ? "?" : url.search;
    default:
      if (name.startsWith("@")) return null;
      if (name === "host") return headers.get("host") ?? url.host;
      // Headers.get() joins repeated fields with ", " as RFC 9421 §2.1 asks.
      return headers.get(name)?.trim() ?? null;
  }
}

function signatureBase(
  method: string,
  url: URL,
  headers: Headers,
  components: readonly string[],
  signatureParams: string,
): string | string[] {
  const lines: string[] = [];
  const missing: string[] = [];
  for (const name of components) {
    const value = componentValue(name, method, url, headers);
    if (value == null) missing.push(name);
    else lines.push(`"${name}": ${value}`);
  }
  if (missing.length > 0) return missing;
  lines.push(`"@signature-params": ${signatureParams}`);
  return lines.join("\n");
}

/**
 * Options for the RFC 9421 signature, usually what an `Accept-Signature`
 * challenge asked for (see `fulfillAcceptSignature()`); Fedify's type of
 * the same name.
 * @since 0.4.0
 */
export interface Rfc9421SignRequestOptions {
  /**
   * The signature's label in `Signature-Input` and `Signature`.
   * @default `"sig1"`
   */
  label?: string;
  /**
   * The components to cover.  `content-digest` is added when the request
   * has a body and it is not asked for.  Components with parameters
   * (`;sf`, `;name`, …) are not supported.
   * @default `@method`, `@target-uri`, `@authority`, [`content-digest`,]
   *          `date`
   */
  components?: AcceptSignatureComponent[];
  /** A nonce for the signature's parameters. */
  nonce?: string;
  /** A tag for the signature's parameters. */
  tag?: string;
  /** Whether the signature expires, an hour after its creation. */
  expires?: true;
}

/** The most components a signature covers. */
const MAX_SIGNED_COMPONENTS = 32;

function componentNames(
  requested: readonly AcceptSignatureComponent[] | undefined,
  hasBody: boolean,
): string[] {
  if (requested == null) {
    return ["@method", "@target-uri", "@authority", ...(hasBody ? ["content-digest"] : []), "date"];
  }
  if (requested.length > MAX_SIGNED_COMPONENTS) {
    throw new TypeError(`Cannot cover more than ${MAX_SIGNED_COMPONENTS} components.`);
  }
  const names: string[] = [];
  for (const component of requested) {
    if (typeof component?.value !== "string" || component.value === "") {
      throw new TypeError('Each component must have a value such as "@method".');
    }
    if (component.params != null && Object.keys(component.params).length > 0) {
      throw new TypeError(
        `Cannot sign the component ${JSON.stringify(component.value)} with parameters ` +
          `(${Object.keys(component.params).join(", ")}); Fedwork signs plain components only.`,
      );
    }
    if (component.value === "@status") {
      throw new TypeError("A request's signature cannot cover @status.");
    }
    // RFC 9421 §2.5: a component covered twice is an error.
    if (!names.includes(component.value)) names.push(component.value);
  }
  if (hasBody && !names.includes("content-digest")) names.push("content-digest");
  return names;
}

/**
 * Signs a request with an RFC 9421 signature as Mastodon verifies it:
 * `Signature-Input: sig1=("@method" "@target-uri" "@authority"
 * "content-digest" "date");alg="rsa-v1_5-sha256";keyid="…";created=…`,
 * with `Content-Digest: sha-256=:…:` when there is a body.  Sets those
 * headers (and `Date`) on `message.headers`.  With `rfc9421`, the label,
 * components and parameters are those; with `append`, the signature is
 * added to those already on the message (one per challenge member).
 * @throws {TypeError} When the key cannot sign, or a component cannot be
 *         covered (unknown, with parameters, or absent from the message).
 */
export async function signHeadersRfc9421(
  message: SignableMessage,
  privateKey: CryptoKey,
  keyId: URL,
  body: SignedBody | null,
  nowMs: number,
  rfc9421: Rfc9421SignRequestOptions = {},
  append = false,
): Promise<void> {
  const algorithm = signatureAlgorithmOf(privateKey);
  if (algorithm == null) {
    throw new TypeError(
      `Cannot sign HTTP messages with a ${privateKey.algorithm.name} key; use an ` +
        "RSASSA-PKCS1-v1_5 (SHA-256) or Ed25519 key.",
    );
  }
  const { url, headers } = message;
  const components = componentNames(rfc9421.components, body != null);
  if (!append || !headers.has("Date")) headers.set("Date", new Date(nowMs).toUTCString());
  if (body != null) headers.set("Content-Digest", contentDigestHeaderOf(await body.sha256()));
  const created = Math.floor(nowMs / 1000);
  if (!append && isDefaultShape(rfc9421) && isPlainString(keyId.href)) {
    // What every delivery of a fan-out signs: fixed components and
    // parameters, so the RFC 8941 serialization is known; written as text
    // (serializeInnerList() makes an Item and a Map per component).
    const params = (body == null ? DEFAULT_INNER_LIST : DEFAULT_INNER_LIST_WITH_DIGEST) +
      `;alg="${algorithm}";keyid="${keyId.href}";created=${created}`;
    const base = signatureBase(message.method, url, headers, components, params) as string;
    const signature = await signBytes(privateKey, encoder.encode(base));
    headers.set("Signature-Input", `sig1=${params}`);
    headers.set("Signature", `sig1=:${encodeBase64(signature)}:`);
    return;
  }
  const parameters = new Map<string, BareItem>([
    ["alg", algorithm],
    ["keyid", keyId.href],
    ["created", created],
  ]);
  if (rfc9421.expires === true) parameters.set("expires", created + 3600);
  if (rfc9421.nonce != null) parameters.set("nonce", rfc9421.nonce);
  if (rfc9421.tag != null) parameters.set("tag", rfc9421.tag);
  const input: InnerList = [components.map((name): Item => [name, new Map()]), parameters];
  let serialized: string;
  try {
    serialized = serializeInnerList(input);
  } catch (error) {
    throw new TypeError(`Cannot write the signature parameters: ${String(error)}`);
  }
  const base = signatureBase(message.method, url, headers, components, serialized);
  if (Array.isArray(base)) {
    throw new TypeError(`Cannot cover ${base.join(", ")}: the request has no such component.`);
  }
  const signature = await signBytes(privateKey, encoder.encode(base));
  const label = rfc9421.label ?? "sig1";
  const inputs = append ? existingDictionary(headers.get("Signature-Input")) : new Map();
  const signatures = append ? existingDictionary(headers.get("Signature")) : new Map();
  inputs.set(label, input);
  signatures.set(label, [signature, new Map()]);
  try {
    headers.set("Signature-Input", serializeDictionary(inputs));
  } catch (error) {
    throw new TypeError(`Cannot use the signature label ${JSON.stringify(label)}: ${error}`);
  }
  headers.set("Signature", serializeDictionary(signatures));
}

/** The default components' inner list, as `serializeInnerList()` writes it. */
const DEFAULT_INNER_LIST = '("@method" "@target-uri" "@authority" "date")';
const DEFAULT_INNER_LIST_WITH_DIGEST =
  '("@method" "@target-uri" "@authority" "content-digest" "date")';

/** Whether the options leave the label, components and parameters default. */
function isDefaultShape(rfc9421: Rfc9421SignRequestOptions): boolean {
  return rfc9421.label == null && rfc9421.components == null && rfc9421.nonce == null &&
    rfc9421.tag == null && rfc9421.expires == null;
}

/**
 * Whether `value` is an RFC 8941 string as it stands: printable ASCII
 * without `"` or `\` (a URL may keep a backslash in its fragment), so that
 * it needs no escape.
 */
function isPlainString(value: string): boolean {
  return /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(value);
}

function existingDictionary(header: string | null): Map<string, Item | InnerList> {
  return header == null ? new Map() : parseDictionary(header);
}

/**
 * Reads the RFC 9421 signatures of a request and checks, for each, what
 * needs no key: the covered components, the content digest and the time.
 * Only the first {@link MAX_SIGNATURES_PER_REQUEST} members of
 * `Signature-Input`, in their order, are read; the others are ignored.
 * @returns The candidates to verify with their keys (at least one), or why
 *          none can be.
 */
export async function prepareRfc9421(
  request: Request,
  body: Uint8Array | null,
  clock: VerificationClock,
): Promise<SignatureCandidate[] | SignatureFailure> {
  const inputHeader = request.headers.get("signature-input");
  const signatureHeader = request.headers.get("signature");
  if (inputHeader == null) return failure("noSignature", "The request is not signed.");
  if (signatureHeader == null) {
    return failure("malformedSignature", "Signature-Input comes without a Signature header.");
  }
  let inputs: Map<string, Item | InnerList>;
  let signatures: Map<string, Item | InnerList>;
  try {
    inputs = parseDictionary(inputHeader);
    signatures = parseDictionary(signatureHeader);
  } catch {
    return failure("malformedSignature", "The Signature-Input or Signature header is malformed.");
  }
  const url = new URL(request.url);
  const candidates: SignatureCandidate[] = [];
  let firstFailure: SignatureFailure | null = null;
  let considered = 0;
  for (const [label, member] of inputs) {
    // The rest are refused unread: each could name its own key to fetch.
    if (considered++ >= MAX_SIGNATURES_PER_REQUEST) break;
    const result = await prepareOne(
      request,
      url,
      body,
      clock,
      label,
      member,
      signatures.get(label),
    );
    if ("verified" in result) firstFailure ??= result;
    else candidates.push(result);
  }
  if (candidates.length > 0) return candidates;
  return firstFailure ?? failure("noSignature", "The Signature-Input header is empty.");
}

async function prepareOne(
  request: Request,
  url: URL,
  body: Uint8Array | null,
  clock: VerificationClock,
  label: string,
  member: Item | InnerList,
  signatureMember: Item | InnerList | undefined,
): Promise<SignatureCandidate | SignatureFailure> {
  const [items, parameters] = member;
  if (!Array.isArray(items)) {
    return failure("malformedSignature", "A Signature-Input member is not an inner list.");
  }
  const keyIdValue = parameters.get("keyid");
  const keyId = typeof keyIdValue === "string" ? parseKeyId(keyIdValue) : null;
  if (keyId == null) return failure("malformedSignature", "The keyid parameter is missing.");
  const signature = signatureMember?.[0];
  if (!(signature instanceof ArrayBuffer)) {
    return failure("malformedSignature", "The Signature header lacks this signature.", keyId);
  }
  let algorithm: SignatureAlgorithm | null = null;
  const alg = parameters.get("alg");
  if (alg != null) {
    if (alg !== "rsa-v1_5-sha256" && alg !== "ed25519") {
      return failure(
        "unsupportedAlgorithm",
        `The algorithm ${String(alg)} is not supported.`,
        keyId,
      );
    }
    algorithm = alg;
  }
  const components: string[] = [];
  const covered = new Set<string>();
  for (const [name, itemParameters] of items) {
    if (typeof name !== "string") {
      return failure("malformedSignature", "A component identifier is not a string.", keyId);
    }
    if (itemParameters.size > 0) {
      // ;sf, ;key, ;bs, ;req and ;name change how a value is computed.
      return failure(
        "unsupportedAlgorithm",
        "Component identifiers with parameters are not supported.",
        keyId,
      );
    }
    // RFC 9421 §2: derived components start with "@"; the others are
    // lowercase field names (Headers.get() throws on anything else).
    if (!name.startsWith("@") && !isSignableHeaderName(name)) {
      return failure(
        "malformedSignature",
        `The component ${JSON.stringify(name)} is not a lowercase field name.`,
        keyId,
      );
    }
    // RFC 9421 §2.5: a component covered twice is an error.
    if (covered.has(name)) {
      return failure("malformedSignature", `The component ${name} is covered twice.`, keyId);
    }
    covered.add(name);
    components.push(name);
  }
  const missing = ["@method", "@target-uri"].filter((name) => !components.includes(name));
  if (body != null && !components.includes("content-digest")) missing.push("content-digest");
  if (missing.length > 0) {
    return failure(
      "missingRequiredComponent",
      `The signature must cover ${missing.join(", ")}.`,
      keyId,
    );
  }
  const created = timeParameter(parameters, "created");
  if (created == null) {
    return failure(
      "malformedSignature",
      "The created parameter is missing or not a time in seconds.",
      keyId,
    );
  }
  const late = checkCreated(created * 1000, clock, keyId);
  if (late != null) return late;
  const expires = parameters.has("expires") ? timeParameter(parameters, "expires") : -1;
  if (expires == null) {
    return failure("malformedSignature", "The expires parameter is not a time in seconds.", keyId);
  }
  if (expires >= 0 && expires * 1000 < clock.nowMs) {
    return failure("outsideTimeWindow", "The signature has expired.", keyId);
  }
  if (components.includes("content-digest") || body != null) {
    const digest = request.headers.get("content-digest");
    if (digest == null) {
      return failure("missingDigest", "The Content-Digest header is missing.", keyId);
    }
    const check = await checkContentDigestHeader(digest, body ?? new Uint8Array());
    if (check !== "match") {
      return failure(
        check === "mismatch" ? "digestMismatch" : "missingDigest",
        check === "mismatch"
          ? "The Content-Digest header does not match the body."
          : `The Content-Digest header is ${check}.`,
        keyId,
      );
    }
  }
  const base = signatureBase(
    request.method,
    url,
    request.headers,
    components,
    serializeInnerList(member as InnerList),
  );
  if (Array.isArray(base)) {
    const derived = base.filter((name) => name.startsWith("@"));
    return derived.length > 0
      ? failure("unsupportedAlgorithm", `Unsupported components: ${derived.join(", ")}.`, keyId)
      : failure("missingRequiredComponent", `Signed headers missing: ${base.join(", ")}.`, keyId);
  }
  const nonce = parameters.get("nonce");
  return {
    spec: "rfc9421",
    keyId,
    algorithm,
    data: encoder.encode(base),
    signature: new Uint8Array(signature),
    label,
    ...(typeof nonce === "string" ? { nonce } : {}),
  };
}

/** An RFC 9421 time parameter: an integer (not a string of digits), or `null`. */
function timeParameter(parameters: Map<string, BareItem>, name: string): number | null {
  const value = parameters.get(name);
  return typeof value === "number" ? parseSignatureTime(value) : null;
}
