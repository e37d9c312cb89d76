import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import type { KvKey } from "@fedwork/core";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { SqliteClosedError } from "./errors.ts";
import { SqliteIdentifierError } from "./errors.ts";
import { kvPrefixRange } from "./key-encoding.ts";
import { SqliteKvStore } from "./kv-store.ts";

async function withDatabase(body: (path: string) => Promise<void>): Promise<void> {
  const namespace = `fedwork-sqlite-kv-test-${crypto.randomUUID()}`;
  try {
    await body(databasePath(namespace));
  } finally {
    await cleanup(namespace);
  }
}

test("SqliteKvStore rejects invalid options naming the option", () => {
  // @ts-expect-error: path is required.
  assertThrows(() => new SqliteKvStore({}), TypeError, "path");
  assertThrows(
    () => new SqliteKvStore({ path: "kv.sqlite", tableName: "kv-store" }),
    SqliteIdentifierError,
    "tableName",
  );
});

test("SqliteKvStore rejects calls after it was closed and keeps the data", async () => {
  await withDatabase(async (path) => {
    const store = new SqliteKvStore({ path });
    await store.set(["kept"], "value");
    await store[Symbol.asyncDispose]();
    await assertRejects(() => store.get(["kept"]), SqliteClosedError);
    await using reopened = new SqliteKvStore({ path });
    assertEquals(await reopened.get(["kept"]), "value");
  });
});

test("SqliteKvStore lists more entries than fit in one page", async () => {
  await withDatabase(async (path) => {
    await using store = new SqliteKvStore({ path });
    const count = 600;
    for (let i = 0; i < count; i++) await store.set(["page", String(i).padStart(4, "0")], i);
    await store.set(["pages"], "not under the prefix");
    const seen: number[] = [];
    for await (const entry of store.list(["page"])) seen.push(entry.value as number);
    assertEquals(seen, Array.from({ length: count }, (_, i) => i));
  });
});

test("SqliteKvStore keeps stores with different table names apart in one file", async () => {
  await withDatabase(async (path) => {
    await using first = new SqliteKvStore({ path, tableName: "first_kv" });
    await using second = new SqliteKvStore({ path, tableName: "second_kv" });
    await first.set(["key"], 1);
    await second.set(["key"], 2);
    assertEquals(await first.get(["key"]), 1);
    assertEquals(await second.get(["key"]), 2);
  });
});

test("kvPrefixRange covers exactly the keys that extend the prefix", () => {
  const prefix: KvKey = ["a", 'b"'];
  const { start, end } = kvPrefixRange(prefix);
  const inRange = (key: KvKey) => {
    const encoded = JSON.stringify(key);
    return encoded >= start && encoded < end;
  };
  assertEquals(inRange(["a", 'b"']), true);
  assertEquals(inRange(["a", 'b"', "c"]), true);
  assertEquals(inRange(["a", 'b"c']), false);
  assertEquals(inRange(["a", "b"]), false);
  assertEquals(inRange(["a"]), false);
});
