// FEP-8fcf followers-collection synchronization, the sending side: the
// `Collection-Synchronization` header a delivery to a followers collection
// carries, so that the receiving server can tell whether its view of who
// follows the sender agrees with the sender's.

const encoder = new TextEncoder();

/**
 * The partial followers digest of FEP-8fcf: the SHA-256 of each distinct
 * actor id, XORed together, in lowercase hex.
 */
async function followersDigest(actorIds: Iterable<string | URL>): Promise<string> {
  const result = new Uint8Array(32);
  const seen = new Set<string>();
  for (const id of actorIds) {
    const href = id instanceof URL ? id.href : id;
    if (seen.has(href)) continue;
    seen.add(href);
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(href)));
    for (let i = 0; i < result.length; i++) result[i] ^= hash[i];
  }
  return Array.from(result, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A value of the header, which FEP-8fcf writes as a quoted string. */
function quoted(name: string, value: string): string {
  if (/["\\\r\n]/.test(value)) {
    throw new TypeError(`The ${name} of a Collection-Synchronization header cannot hold ${value}.`);
  }
  return `${name}="${value}"`;
}

/**
 * Builds the `Collection-Synchronization` header of FEP-8fcf for a
 * delivery to the followers on one server, as Fedify's function of the
 * same name does: the sender's followers collection, the URL of the part
 * of it on the receiver's server (`?base-url=<origin>/`), and the digest of
 * the followers reached.  `sendActivity(…, "followers", …, {
 * syncCollection: true })` adds it to each delivery itself.
 * @param collectionId The sender's followers collection.
 * @param actorIds The followers the delivery reaches, all on one server.
 * @returns The header's value.
 * @throws {TypeError} When `actorIds` is empty or an id is not a URL.
 * @since 0.4.0
 * @example
 * ```ts
 * import { buildCollectionSynchronizationHeader } from "@fedwork/core";
 *
 * const header = await buildCollectionSynchronizationHeader(
 *   "https://example.com/users/alice/followers",
 *   ["https://remote.example/users/bob", "https://remote.example/users/carol"],
 * );
 * // collectionId="https://example.com/users/alice/followers",
 * // url="https://example.com/users/alice/followers?base-url=https%3A%2F%2Fremote.example%2F",
 * // digest="…"
 * ```
 */
export async function buildCollectionSynchronizationHeader(
  collectionId: string | URL,
  actorIds: Iterable<string | URL>,
): Promise<string> {
  const ids = [...actorIds].map((id) => id instanceof URL ? id.href : id);
  if (ids.length === 0) {
    throw new TypeError("buildCollectionSynchronizationHeader() needs at least one actor id.");
  }
  if (!URL.canParse(ids[0])) {
    throw new TypeError(`The actor id ${JSON.stringify(ids[0])} is not a URL.`);
  }
  const collection = new URL(collectionId);
  const url = new URL(collection);
  url.searchParams.set("base-url", `${new URL(ids[0]).origin}/`);
  return [
    quoted("collectionId", collection.href),
    quoted("url", url.href),
    quoted("digest", await followersDigest(ids)),
  ].join(", ");
}
