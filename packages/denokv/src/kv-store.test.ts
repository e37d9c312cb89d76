import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { DenoKvClosedError } from "./errors.ts";
import { DenoKvStore } from "./kv-store.ts";
import { cleanup, databasePath, openKvFile } from "./testdata/conformance-factory.ts";
import type { DenoKv } from "./deno-kv.ts";

async function withKv(body: (kv: DenoKv) => Promise<void>): Promise<void> {
  const namespace = `fedwork-denokv-kv-test-${crypto.randomUUID()}`;
  const opened = await openKvFile(databasePath(namespace));
  try {
    await body(opened.kv);
  } finally {
    opened.close();
    await cleanup(namespace);
  }
}

test("DenoKvStore rejects invalid options naming the option", () => {
  // @ts-expect-error: kv is required.
  assertThrows(() => new DenoKvStore({}), TypeError, "kv");
  const kv = { get() {}, list() {}, atomic() {} } as unknown as DenoKv;
  assertThrows(() => new DenoKvStore({ kv, prefix: [] }), TypeError, "prefix");
  assertThrows(
    // @ts-expect-error: a misspelt option.
    () => new DenoKvStore({ kv, prefx: ["a"] }),
    TypeError,
    "prefix",
  );
});

test("DenoKvStore keeps stores with different prefixes apart and leaves the database open", async () => {
  await withKv(async (kv) => {
    const first = new DenoKvStore({ kv, prefix: ["first"] });
    await using second = new DenoKvStore({ kv, prefix: ["second"] });
    await first.set(["key"], 1);
    await second.set(["key"], 2);
    assertEquals(await first.get(["key"]), 1);
    assertEquals(await second.get(["key"]), 2);
    await first[Symbol.asyncDispose]();
    await assertRejects(() => first.get(["key"]), DenoKvClosedError);
    // The database belongs to the caller: the other store still works.
    assertEquals(await second.get(["key"]), 2);
    assertEquals((await kv.get(["second", "key"])).versionstamp !== null, true);
  });
});

test("DenoKvStore lists the entry at the prefix itself and the ones under it", async () => {
  await withKv(async (kv) => {
    await using store = new DenoKvStore({ kv });
    await store.set(["a"], 0);
    await store.set(["a", "b"], 1);
    await store.set(["a", "b", "c"], 2);
    await store.set(["ab"], 3);
    const listed: unknown[] = [];
    for await (const entry of store.list(["a", "b"])) listed.push([entry.key, entry.value]);
    assertEquals(listed, [[["a", "b"], 1], [["a", "b", "c"], 2]]);
  });
});

test("DenoKvStore never returns an expired entry, even before Deno KV deletes it", async () => {
  await withKv(async (kv) => {
    await using store = new DenoKvStore({ kv });
    // Write the stored form of an entry that expired a minute ago, as if
    // Deno KV had not swept it yet.
    await kv.atomic().set(["fedwork", "kv", "old"], {
      json: '"stale"',
      expires: Date.now() - 60_000,
    }).commit();
    assertEquals(await store.get(["old"]), undefined);
    const listed: unknown[] = [];
    for await (const entry of store.list()) listed.push(entry.key);
    assertEquals(listed, []);
    assertEquals(await store.cas(["old"], undefined, "fresh"), true);
    assertEquals(await store.get(["old"]), "fresh");
  });
});

test("DenoKvStore's concurrent cas() calls on one key let exactly one win", async () => {
  await withKv(async (kv) => {
    await using store = new DenoKvStore({ kv });
    await store.set(["counter"], { n: 0 });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.cas(["counter"], { n: 0 }, { n: i + 1 })),
    );
    assertEquals(results.filter((won) => won).length, 1);
  });
});
