// Base64 for the signature headers, on atob()/btoa(), which every runtime
// has, rather than node:buffer, so that the signature code loads where
// Node.js's built-in modules do not exist (Cloudflare Workers).

/** Bytes per `String.fromCharCode()` call, well below any engine's argument limit. */
const CHUNK_BYTES = 8192;

/**
 * Encodes bytes as standard Base64 with padding.
 * @param bytes The bytes.
 * @returns The Base64 text.
 */
export function encodeBase64(bytes: Uint8Array): string {
  // One string a chunk, not one a byte: a signature is signed and encoded
  // for every delivery of a fan-out, and 256 one-character strings joined
  // one by one were over half of what signing a delivery allocated.  Not
  // `Uint8Array.prototype.toBase64()`: where the runtime lacks it (Node.js
  // 24), jsonld, which @fedify/vocab loads, installs a polyfill that
  // allocates as much.
  let binary = "";
  for (let start = 0; start < bytes.length; start += CHUNK_BYTES) {
    const chunk = bytes.subarray(start, start + CHUNK_BYTES);
    binary += String.fromCharCode.apply(null, chunk as unknown as number[]);
  }
  return btoa(binary);
}

/**
 * Decodes Base64 as leniently as Node.js's `Buffer.from(text, "base64")`,
 * which peers' signatures were long read with: the URL-safe alphabet is
 * accepted, characters outside the alphabet are skipped, and missing
 * padding is tolerated.  Malformed input gives bytes that will not verify,
 * never an exception.
 * @param text The Base64 text.
 * @returns The bytes.
 */
export function decodeBase64Leniently(text: string): Uint8Array<ArrayBuffer> {
  let clean = text.split("=")[0].replace(/[^A-Za-z0-9+/_-]/g, "").replace(/-/g, "+")
    .replace(/_/g, "/");
  // A single leftover character carries no whole byte.
  if (clean.length % 4 === 1) clean = clean.slice(0, -1);
  const binary = atob(clean + "=".repeat((4 - clean.length % 4) % 4));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/**
 * Decodes standard Base64 strictly, as `atob()` does (padding optional,
 * whitespace ignored, nothing else outside the alphabet).
 * @param text The Base64 text.
 * @returns The bytes, or `null` when the text is not Base64.
 */
export function decodeBase64Strictly(text: string): Uint8Array<ArrayBuffer> | null {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
