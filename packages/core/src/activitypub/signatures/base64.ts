// Base64 for the signature headers, on atob()/btoa(), which every runtime
// has, rather than node:buffer, so that the signature code loads where
// Node.js's built-in modules do not exist (Cloudflare Workers).

/**
 * Encodes bytes as standard Base64 with padding.
 * @param bytes The bytes.
 * @returns The Base64 text.
 */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
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
