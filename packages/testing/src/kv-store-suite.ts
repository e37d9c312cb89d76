import { assert, assertEquals, test } from "./test-runner.ts";
import { type KvKey, type KvStore, toTemporalDuration } from "@fedwork/core";
import { createTestNamespace } from "./namespace.ts";
import type { KvStoreConformanceOptions } from "./types.ts";
import { waitUntil, within } from "./wait.ts";

// How long an entry with a one-second TTL may take to disappear.  Engines
// that expire lazily or sweep periodically need some slack; the test only
// fails when the entry never goes away.
const TTL_EXPIRY_TIMEOUT_MS = 30_000;

// A teardown step that takes longer than this is reported, not waited on.
const TEARDOWN_TIMEOUT_MS = 30_000;

async function withStore(
  options: KvStoreConformanceOptions,
  body: (store: KvStore) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  let store: KvStore;
  try {
    store = await options.createStore(namespace);
  } catch (error) {
    await options.cleanup?.(namespace).catch(() => {});
    throw error;
  }
  const close = async () => {
    const dispose = (store as Partial<AsyncDisposable>)[Symbol.asyncDispose];
    if (dispose != null) {
      await within(
        Promise.resolve(dispose.call(store)),
        "[Symbol.asyncDispose]() of the store",
        TEARDOWN_TIMEOUT_MS,
      );
    }
    if (options.cleanup != null) {
      await within(
        options.cleanup(namespace),
        `cleanup(${JSON.stringify(namespace)})`,
        TEARDOWN_TIMEOUT_MS,
      );
    }
  };
  try {
    await body(store);
  } catch (error) {
    // The body's own failure is the more useful one to report.
    await close().catch(() => {});
    throw error;
  }
  await close();
}

async function listEntries(
  store: KvStore,
  prefix?: KvKey,
): Promise<{ key: KvKey; value: unknown }[]> {
  const entries: { key: KvKey; value: unknown }[] = [];
  for await (const entry of prefix === undefined ? store.list() : store.list(prefix)) {
    entries.push({ key: [...entry.key] as unknown as KvKey, value: entry.value });
  }
  // list() promises no order; compare sorted by key.
  return entries.sort((a, b) => compareKeys(a.key, b.key));
}

function compareKeys(a: KvKey, b: KvKey): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * Registers the `KvStore` conformance tests with the runtime's own test
 * runner (`Deno.test`, `node:test` or `bun:test`): get, set,
 * overwrite and delete; JSON values round-tripping deep-equal; keys that
 * would collide if naively joined staying distinct; list by element-wise
 * prefix (and everything with no prefix), with prefix characters taken
 * literally; TTL expiry; `getMany()` and `setMany()` (when present: order, absent,
 * repeated and expired keys, per-entry TTLs); and `cas()` (when present) on absent keys,
 * mismatches, matches and deep-equal objects.
 *
 * Every test uses a fresh store instance on a fresh namespace, disposes it
 * with `Symbol.asyncDispose` and calls `cleanup()` at its end.
 *
 * @example
 * ```ts ignore
 * import { testKvStore } from "@fedwork/testing";
 * import { RedisKvStore } from "./redis-kv-store.ts";
 *
 * testKvStore({
 *   name: "RedisKvStore",
 *   createStore: (namespace) => new RedisKvStore({ keyPrefix: namespace }),
 * });
 * ```
 * @param options The backend's name and how to create and clean up a store.
 * @since 0.1.0
 */
export function testKvStore(options: KvStoreConformanceOptions): void {
  const define = (behaviour: string, body: (store: KvStore) => Promise<void>) =>
    test(`${options.name}: ${behaviour}`, () => withStore(options, body));

  define("get returns undefined for an absent key", async (store) => {
    assertEquals(await store.get(["absent"]), undefined);
  });

  define("get returns what set stored", async (store) => {
    await store.set(["user", "alice"], { name: "Alice" });
    assertEquals(await store.get(["user", "alice"]), { name: "Alice" });
  });

  define("set overwrites an existing value", async (store) => {
    await store.set(["counter"], 1);
    await store.set(["counter"], 2);
    assertEquals(await store.get(["counter"]), 2);
  });

  define("delete removes a value and ignores absent keys", async (store) => {
    await store.set(["doomed"], "value");
    await store.set(["kept"], "value");
    await store.delete(["doomed"]);
    await store.delete(["never", "set"]);
    assertEquals(await store.get(["doomed"]), undefined);
    assertEquals(await store.get(["kept"]), "value");
  });

  define("values of every JSON type round-trip deep-equal", async (store) => {
    const values: [string, unknown][] = [
      ["object", { a: 1, b: { c: [true, null, "x"] }, empty: {} }],
      ["array", [1, "two", [3], { four: 4 }, []]],
      ["integer", 42],
      ["negative", -7],
      ["float", 3.25],
      ["zero", 0],
      ["string", 'héllo, 世界 "quoted" \\ \n'],
      ["empty-string", ""],
      ["true", true],
      ["false", false],
      ["null", null],
    ];
    for (const [name, value] of values) await store.set(["value", name], value);
    for (const [name, value] of values) {
      assertEquals(await store.get(["value", name]), value, `The ${name} value changed.`);
    }
  });

  define("keys that join to the same string stay distinct", async (store) => {
    const keys: KvKey[] = [["a", "b"], ["a:b"], ["a.b"], ["a/b"], ["a", "b", ""], ["a,b"]];
    for (const [index, key] of keys.entries()) await store.set(key, index);
    for (const [index, key] of keys.entries()) {
      assertEquals(await store.get(key), index, `Key ${JSON.stringify(key)} collided.`);
    }
  });

  define("list yields the entries under a prefix, element by element", async (store) => {
    await store.set(["a"], 1);
    await store.set(["a", "b"], 2);
    await store.set(["a", "b", "c"], 3);
    await store.set(["a", "c"], 4);
    await store.set(["ab"], 5);
    await store.set(["ab", "c"], 6);
    await store.set(["b", "a"], 7);
    assertEquals(await listEntries(store, ["a"]), [
      { key: ["a"], value: 1 },
      { key: ["a", "b"], value: 2 },
      { key: ["a", "b", "c"], value: 3 },
      { key: ["a", "c"], value: 4 },
    ]);
    assertEquals(await listEntries(store, ["a", "b"]), [
      { key: ["a", "b"], value: 2 },
      { key: ["a", "b", "c"], value: 3 },
    ]);
    assertEquals(await listEntries(store, ["zzz"]), []);
  });

  define("list without a prefix yields every entry", async (store) => {
    await store.set(["one"], 1);
    await store.set(["two", "deep"], 2);
    await store.set(["three"], { n: 3 });
    assertEquals(await listEntries(store), [
      { key: ["one"], value: 1 },
      { key: ["three"], value: { n: 3 } },
      { key: ["two", "deep"], value: 2 },
    ]);
  });

  define("list takes prefix characters literally", async (store) => {
    await store.set(["x%"], 1);
    await store.set(["x_"], 2);
    await store.set(["x*"], 3);
    await store.set(["x["], 4);
    await store.set(["xy"], 5);
    await store.set(["x%", "z"], 6);
    assertEquals(await listEntries(store, ["x%"]), [
      { key: ["x%"], value: 1 },
      { key: ["x%", "z"], value: 6 },
    ]);
    assertEquals(await listEntries(store, ["x_"]), [{ key: ["x_"], value: 2 }]);
    assertEquals(await listEntries(store, ["x*"]), [{ key: ["x*"], value: 3 }]);
    assertEquals(await listEntries(store, ["x["]), [{ key: ["x["], value: 4 }]);
  });

  define("an entry with a TTL expires while others stay", async (store) => {
    // A Temporal.Duration is what every store takes, Fedify's included; the
    // other forms only where the store accepts them.
    const durationInputs = options.durationInputs ?? true;
    const setAt = Date.now();
    await store.set(["ttl", "short"], "soon gone", { ttl: toTemporalDuration({ seconds: 1 }) });
    await store.set(["ttl", "long"], "stays", {
      ttl: durationInputs ? { hours: 1 } : toTemporalDuration({ hours: 1 }),
    });
    if (durationInputs) await store.set(["ttl", "long-iso"], "stays", { ttl: "PT1H" });
    await store.set(["ttl", "forever"], "stays");
    const rightAfter = await store.get(["ttl", "short"]);
    // Only conclusive when the read happened within the TTL; a machine that
    // took over a second for two writes and a read says nothing about it.
    if (Date.now() - setAt < 1000) {
      assertEquals(rightAfter, "soon gone", "The entry was gone right after set().");
    }
    await waitUntil(async () => await store.get(["ttl", "short"]) === undefined, {
      timeoutMs: TTL_EXPIRY_TIMEOUT_MS,
      intervalMs: 250,
      what: "the entry with a one-second TTL to expire",
    });
    assert(Date.now() - setAt >= 900, "The entry expired before its TTL.");
    const staying: { key: KvKey; value: unknown }[] = [
      { key: ["ttl", "forever"], value: "stays" },
      { key: ["ttl", "long"], value: "stays" },
    ];
    if (durationInputs) staying.push({ key: ["ttl", "long-iso"], value: "stays" });
    assertEquals(await listEntries(store, ["ttl"]), staying);
  });

  define("getMany returns the values in the order of the keys", async (store) => {
    if (store.getMany == null) return; // Optional method; nothing to check.
    // Keys with different first elements land in different hash slots of
    // a Redis Cluster, so a store must not send them in one MGET there.
    const keys: KvKey[] = [];
    for (let i = 0; i < 24; i++) keys.push([`many-${i}`, "x"]);
    for (const [index, key] of keys.entries()) {
      if (index % 3 !== 1) await store.set(key, { index });
    }
    const asked: KvKey[] = [...keys, ["absent"], keys[0], ["many-0"]];
    const expected = asked.map((key) => {
      const index = keys.indexOf(key);
      return index < 0 || index % 3 === 1 ? undefined : { index };
    });
    assertEquals(await store.getMany(asked), expected);
    assertEquals(await store.getMany([]), []);
  });

  define("getMany leaves out expired entries and tells similar keys apart", async (store) => {
    if (store.getMany == null) return;
    await store.set(["a", "b"], 1);
    await store.set(["a:b"], 2);
    await store.set(["gone"], "soon", { ttl: toTemporalDuration({ seconds: 1 }) });
    await waitUntil(async () => await store.get(["gone"]) === undefined, {
      timeoutMs: TTL_EXPIRY_TIMEOUT_MS,
      intervalMs: 250,
      what: "the entry with a one-second TTL to expire",
    });
    assertEquals(await store.getMany([["a:b"], ["gone"], ["a", "b"], ["a"]]), [
      2,
      undefined,
      1,
      undefined,
    ]);
  });

  define(
    "setMany writes every entry as set would, the last one winning for a key",
    async (store) => {
      if (store.setMany == null) return; // Optional method; nothing to check.
      await store.set(["many", "old"], "before");
      const entries = [];
      for (let i = 0; i < 24; i++) entries.push({ key: [`set-${i}`, "x"] as KvKey, value: { i } });
      await store.setMany([
        ...entries,
        { key: ["many", "old"], value: "overwritten" },
        { key: ["many", "twice"], value: 1 },
        { key: ["many", "twice"], value: [2, { deep: null }] },
        {
          key: ["many", "kept"],
          value: "stays",
          options: { ttl: toTemporalDuration({ hours: 1 }) },
        },
      ]);
      for (const { key, value } of entries) assertEquals(await store.get(key), value);
      assertEquals(await store.get(["many", "old"]), "overwritten");
      assertEquals(await store.get(["many", "twice"]), [2, { deep: null }]);
      assertEquals(await store.get(["many", "kept"]), "stays");
      await store.setMany([]);
      assertEquals(await store.get(["many", "kept"]), "stays");
    },
  );

  define("setMany gives each entry its own TTL", async (store) => {
    if (store.setMany == null) return;
    await store.setMany([
      {
        key: ["ttl", "short"],
        value: "soon gone",
        options: { ttl: toTemporalDuration({ seconds: 1 }) },
      },
      { key: ["ttl", "forever"], value: "stays" },
    ]);
    await waitUntil(async () => await store.get(["ttl", "short"]) === undefined, {
      timeoutMs: TTL_EXPIRY_TIMEOUT_MS,
      intervalMs: 250,
      what: "the entry with a one-second TTL to expire",
    });
    assertEquals(await listEntries(store, ["ttl"]), [{ key: ["ttl", "forever"], value: "stays" }]);
  });

  define("cas on an absent key with expected undefined stores the value", async (store) => {
    if (store.cas == null) return; // Optional method; nothing to check.
    assertEquals(await store.cas(["cas"], undefined, { v: 1 }), true);
    assertEquals(await store.get(["cas"]), { v: 1 });
  });

  define("cas fails and keeps the value when the expected value differs", async (store) => {
    if (store.cas == null) return;
    await store.set(["cas"], "current");
    assertEquals(await store.cas(["cas"], "other", "new"), false);
    assertEquals(await store.cas(["cas"], undefined, "new"), false);
    assertEquals(await store.get(["cas"]), "current");
    assertEquals(await store.cas(["absent"], "something", "new"), false);
    assertEquals(await store.get(["absent"]), undefined);
  });

  define("cas swaps when the expected value matches", async (store) => {
    if (store.cas == null) return;
    await store.set(["cas"], 1);
    assertEquals(await store.cas(["cas"], 1, 2), true);
    assertEquals(await store.get(["cas"]), 2);
    assertEquals(await store.cas(["cas"], 1, 3), false);
    assertEquals(await store.get(["cas"]), 2);
  });

  define("cas compares objects deeply, not by identity", async (store) => {
    if (store.cas == null) return;
    await store.set(["cas"], { name: "a", tags: ["x", "y"], meta: { n: 1 } });
    const mismatch = { name: "a", tags: ["x", "z"], meta: { n: 1 } };
    assertEquals(await store.cas(["cas"], mismatch, "wrong"), false);
    const copy = { name: "a", tags: ["x", "y"], meta: { n: 1 } };
    assertEquals(await store.cas(["cas"], copy, { name: "b" }), true);
    assertEquals(await store.get(["cas"]), { name: "b" });
  });
}
