import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { testKvStore } from "@fedwork/testing";
import type { WorkersD1Database } from "./bindings.ts";
import { D1KvStore } from "./d1-kv-store.ts";
import { createD1Store } from "./testdata/kv-store-factory.ts";
import { startWorker } from "./testdata/miniflare.ts";

// The conformance suite, cas() included, each call run by a D1KvStore
// inside workerd on Miniflare's D1.
testKvStore({ name: "D1KvStore", createStore: createD1Store });

test("D1KvStore lets exactly one of many concurrent cas() calls win", async () => {
  await using worker = await startWorker();
  const call = (body: Record<string, unknown>) =>
    worker.post<{ swapped?: boolean }>("/kv", { store: "d1", prefix: "race", ...body });
  await call({ op: "set", key: ["counter"], value: 0 });
  // Each call is its own request to the Worker, so they interleave there.
  const results = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) => call({ op: "cas", key: ["counter"], expected: 0, value: i + 1 }),
    ),
  );
  const winners = results.flatMap((result, i) => result.swapped ? [i + 1] : []);
  assertEquals(winners.length, 1, JSON.stringify(results));
  assertEquals(
    (await call({ op: "get", key: ["counter"] }) as { value: number }).value,
    winners[0],
  );
});

test("new D1KvStore() refuses a table name that is not a plain identifier", () => {
  const database = { prepare: () => ({}) } as unknown as WorkersD1Database;
  assertThrows(
    () => new D1KvStore(database, { table: "kv; DROP TABLE users" }),
    TypeError,
    "letters, digits and underscores",
  );
  assertThrows(
    () => new D1KvStore(database, { tabel: "kv" } as never),
    TypeError,
    "did you mean table",
  );
  assertThrows(() => new D1KvStore(undefined as never), TypeError, "D1 database binding");
});
