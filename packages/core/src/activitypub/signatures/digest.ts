import { decodeBase64Leniently, encodeBase64 } from "./base64.ts";
import { type Item, parseDictionary } from "structured-headers";

/**
 * What checking a `Digest` or `Content-Digest` header against a body found.
 * - `match`: every digest of a supported algorithm matches the body;
 * - `mismatch`: a digest of a supported algorithm does not match;
 * - `unsupported`: the header names no algorithm we support
 *   (SHA-256, SHA-512);
 * - `malformed`: the header cannot be parsed.
 * @since 0.2.0
 */
export type DigestCheck = "match" | "mismatch" | "unsupported" | "malformed";

const ALGORITHMS: Readonly<Record<string, "SHA-256" | "SHA-512">> = {
  "sha-256": "SHA-256",
  "sha-512": "SHA-512",
};

async function hash(
  algorithm: "SHA-256" | "SHA-512",
  body: Uint8Array,
): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest(algorithm, body as Uint8Array<ArrayBuffer>));
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

/**
 * Builds the value of a draft-cavage `Digest` header (RFC 3230) for a body,
 * as Mastodon expects it: `SHA-256=<base64>`.
 * @param body The request body.
 * @returns The header value.
 * @since 0.2.0
 */
export async function createDigestHeader(body: Uint8Array): Promise<string> {
  return digestHeaderOf(await hash("SHA-256", body));
}

/** The `Digest` header for a body whose SHA-256 is known. */
export function digestHeaderOf(sha256: Uint8Array): string {
  return `SHA-256=${encodeBase64(sha256)}`;
}

/**
 * Builds the value of an RFC 9530 `Content-Digest` header for a body:
 * `sha-256=:<base64>:`.
 * @param body The request body.
 * @returns The header value.
 * @since 0.2.0
 */
export async function createContentDigestHeader(body: Uint8Array): Promise<string> {
  return contentDigestHeaderOf(await hash("SHA-256", body));
}

/** The `Content-Digest` header for a body whose SHA-256 is known. */
export function contentDigestHeaderOf(sha256: Uint8Array<ArrayBuffer>): string {
  // RFC 8941's serialization of a one-member dictionary whose value is a
  // byte sequence: standard Base64 with padding between colons.  Written as
  // text, not through serializeDictionary(): every delivery writes one.
  return `sha-256=:${encodeBase64(sha256)}:`;
}

/**
 * Checks a draft-cavage `Digest` header (`SHA-256=<base64>`, possibly
 * several comma-separated digests) against a body.  Algorithm names are
 * case-insensitive; digests of unknown algorithms are ignored.
 * @param header The `Digest` header's value.
 * @param body The request body.
 * @returns What the check found.
 * @since 0.2.0
 */
export async function checkDigestHeader(header: string, body: Uint8Array): Promise<DigestCheck> {
  // A header may repeat an algorithm many times: hash the body once per
  // algorithm, not once per digest listed.
  const hashes = new Map<string, Promise<Uint8Array>>();
  let supported = 0;
  for (const part of header.split(",")) {
    // Base64 values end with "=", so only the first "=" separates the name.
    const index = part.indexOf("=");
    if (index < 1) return "malformed";
    const algorithm = ALGORITHMS[part.slice(0, index).trim().toLowerCase()];
    if (algorithm == null) continue;
    const value = part.slice(index + 1).trim();
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return "malformed";
    supported++;
    let digest = hashes.get(algorithm);
    if (digest == null) hashes.set(algorithm, digest = hash(algorithm, body));
    if (!equalBytes(await digest, decodeBase64Leniently(value))) return "mismatch";
  }
  return supported > 0 ? "match" : "unsupported";
}

/**
 * Checks an RFC 9530 `Content-Digest` header (a structured dictionary such
 * as `sha-256=:<base64>:`) against a body.  Digests of unknown algorithms
 * are ignored.
 * @param header The `Content-Digest` header's value.
 * @param body The request body.
 * @returns What the check found.
 * @since 0.2.0
 */
export async function checkContentDigestHeader(
  header: string,
  body: Uint8Array,
): Promise<DigestCheck> {
  let members: Map<string, unknown>;
  try {
    members = parseDictionary(header);
  } catch {
    return "malformed";
  }
  let supported = 0;
  for (const [name, member] of members) {
    const algorithm = ALGORITHMS[name];
    if (algorithm == null) continue;
    const [value] = member as Item;
    if (!(value instanceof ArrayBuffer)) return "malformed";
    supported++;
    if (!equalBytes(await hash(algorithm, body), new Uint8Array(value))) return "mismatch";
  }
  return supported > 0 ? "match" : "unsupported";
}
