import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { buildCollectionSynchronizationHeader } from "./synchronization.ts";

async function sha256Hex(text: string): Promise<string> {
  const hash = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return Array.from(hash, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

test("buildCollectionSynchronizationHeader() names the collection, its part and the digest", async () => {
  const bob = "https://remote.example/users/bob";
  const header = await buildCollectionSynchronizationHeader(
    new URL("https://example.com/users/alice/followers"),
    [bob, new URL(bob)],
  );
  // One distinct follower: the digest is its SHA-256 (XOR with nothing).
  assertEquals(
    header,
    'collectionId="https://example.com/users/alice/followers", ' +
      'url="https://example.com/users/alice/followers?base-url=https%3A%2F%2Fremote.example%2F", ' +
      `digest="${await sha256Hex(bob)}"`,
  );
});

test("buildCollectionSynchronizationHeader() XORs the followers' hashes, in any order", async () => {
  const ids = ["https://r.example/a", "https://r.example/b"];
  const one = await buildCollectionSynchronizationHeader("https://example.com/f", ids);
  const other = await buildCollectionSynchronizationHeader("https://example.com/f", ids.reverse());
  assertEquals(one, other);
  // A third follower changes it.
  const three = await buildCollectionSynchronizationHeader("https://example.com/f", [
    ...ids,
    "https://r.example/c",
  ]);
  assertEquals(three === one, false);
});

test("buildCollectionSynchronizationHeader() refuses no followers and a non-URL id", async () => {
  await assertRejects(
    () => buildCollectionSynchronizationHeader("https://example.com/f", []),
    TypeError,
  );
  await assertRejects(
    () => buildCollectionSynchronizationHeader("https://example.com/f", ["bob"]),
    TypeError,
  );
});
