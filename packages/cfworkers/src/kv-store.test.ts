import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { testKvStore } from "@fedwork/testing";
import { WorkersKvStore } from "./kv-store.ts";
import type { WorkersKvNamespace } from "./bindings.ts";
import { createStore } from "./testdata/kv-store-factory.ts";
import { startWorker } from "./testdata/miniflare.ts";

// The conformance suite, each call run by a WorkersKvStore inside workerd
// on Miniflare's Workers KV.  Its TTL test writes a one-second TTL, below
// Workers KV's 60-second minimum, so it checks the store's own expiry.
testKvStore({ name: "WorkersKvStore", createStore });

test("WorkersKvStore has no cas(), since Workers KV cannot compare and swap atomically", () => {
  const namespace = {} as WorkersKvNamespace;
  Object.assign(namespace, {
    getWithMetadata: () => Promise.resolve({ value: null, metadata: null }),
    put: () => Promise.resolve(),
    delete: () => Promise.resolve(),
    list: () => Promise.resolve({ keys: [], list_complete: true }),
  });
  assertEquals("cas" in new WorkersKvStore(namespace), false);
});

test("new WorkersKvStore() refuses a missing binding and names a misspelt option", () => {
  assertThrows(
    () => new WorkersKvStore(undefined as unknown as WorkersKvNamespace),
    TypeError,
    "Workers KV namespace binding",
  );
  const namespace = {
    getWithMetadata: () => Promise.resolve({ value: null, metadata: null }),
    put: () => Promise.resolve(),
    delete: () => Promise.resolve(),
    list: () => Promise.resolve({ keys: [], list_complete: true }),
  };
  assertThrows(
    () => new WorkersKvStore(namespace, { prefx: "a" } as never),
    TypeError,
    "did you mean prefix",
  );
});

test("WorkersKvStore refuses a key longer than Workers KV's 512 bytes", async () => {
  await using worker = await startWorker();
  const binding = await worker.miniflare.getKVNamespace("KV") as unknown as WorkersKvNamespace;
  const kv = new WorkersKvStore(binding);
  await assertRejects(() => kv.set(["x".repeat(600)], 1), RangeError, "512 bytes");
});

test("WorkersKvStore gives a TTL under a minute to Workers KV as 60 seconds", async () => {
  await using worker = await startWorker();
  const binding = await worker.miniflare.getKVNamespace("KV") as unknown as WorkersKvNamespace;
  const kv = new WorkersKvStore(binding);
  const before = Math.floor(Date.now() / 1000);
  await kv.set(["short"], "value", { ttl: { seconds: 5 } });
  const listed = await binding.list();
  assertEquals(listed.keys.map((key) => key.name), ['["short"]']);
  const expiration = listed.keys[0].expiration!;
  // Workers KV's own expiry is at least a minute away: its minimum TTL.
  assertEquals(expiration >= before + 60, true, `expiration ${expiration}, now ${before}`);
  assertEquals(await kv.get(["short"]), "value");
});
