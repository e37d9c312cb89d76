import { assertEquals, assertThrows, test } from "@fedify/fixture";
import type { KvKey } from "../kv/kv-store.ts";
import { withKeyPrefixes } from "../kv/key-prefixes.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { FederationOptionError } from "./errors.ts";
import { createFederation } from "./federation.ts";

test("withKeyPrefixes() stores keys under the new prefix and lists them under the old one", async () => {
  const store = new MemoryKvStore();
  const kv = withKeyPrefixes(store, [{ from: ["fedwork", "a"], to: ["app", "x", "a"] }]);
  await kv.set(["fedwork", "a", "1"], "one");
  await kv.set(["fedwork", "b", "2"], "two");
  assertEquals(await store.get(["app", "x", "a", "1"]), "one");
  assertEquals(await store.get(["fedwork", "a", "1"]), undefined);
  assertEquals(await kv.get(["fedwork", "a", "1"]), "one");
  assertEquals(await kv.cas!(["fedwork", "a", "1"], "one", "uno"), true);
  assertEquals(await store.get(["app", "x", "a", "1"]), "uno");
  const listed: KvKey[] = [];
  for await (const entry of kv.list(["fedwork", "a"])) listed.push(entry.key);
  assertEquals(listed, [["fedwork", "a", "1"]]);
  await kv.delete(["fedwork", "a", "1"]);
  assertEquals(await store.get(["app", "x", "a", "1"]), undefined);
  assertEquals(await store.get(["fedwork", "b", "2"]), "two");
});

test("createFederation() checks kvPrefixes and names the offending prefix", () => {
  const kv = new MemoryKvStore();
  createFederation({ kv, kvPrefixes: { activityIdempotence: ["app", "idem"] } });
  // Fedify's names all count, circuitBreaker and remoteDocument included.
  createFederation({ kv, kvPrefixes: { circuitBreaker: ["c"], remoteDocument: ["d"] } });
  const error = assertThrows(
    // deno-lint-ignore no-explicit-any
    () => createFederation({ kv, kvPrefixes: { publicKey: [] as any } }),
    FederationOptionError,
  );
  assertEquals((error as FederationOptionError).option, "kvPrefixes.publicKey");
  assertThrows(
    () =>
      createFederation({
        kv,
        kvPrefixes: { publicKey: ["app"], httpMessageSignaturesSpec: ["app", "s"] },
      }),
    FederationOptionError,
    "overlap",
  );
  assertThrows(
    // deno-lint-ignore no-explicit-any
    () => createFederation({ kv, kvPrefixes: { publicKeys: ["k"] } as any }),
    UnknownOptionError,
    "publicKey",
  );
  assertThrows(
    // deno-lint-ignore no-explicit-any
    () => createFederation({ kv, kvPrefixes: ["k"] as any }),
    FederationOptionError,
    "kvPrefixes",
  );
});
