import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import postgres from "postgres";
import { POSTGRES_URL } from "./testdata/conformance-factory.ts";
import { PostgresClosedError } from "./errors.ts";
import { PostgresKvStore } from "./kv-store.ts";

function uniqueTable(): string {
  return `fedwork_kvtest_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

test("PostgresKvStore rejects a table name that is not a plain SQL name", () => {
  assertThrows(
    () => new PostgresKvStore(POSTGRES_URL, { tableName: "kv; DROP" }),
    TypeError,
    "tableName",
  );
  assertThrows(() => new PostgresKvStore(POSTGRES_URL, { schema: '"x"' }), TypeError, "schema");
});

test("PostgresKvStore rejects use after it was disposed", async () => {
  const kv = new PostgresKvStore(POSTGRES_URL, { tableName: uniqueTable() });
  await kv[Symbol.asyncDispose]();
  await assertRejects(() => kv.get(["a"]), PostgresClosedError);
});

test("PostgresKvStore leaves a client it was given open and stores in its schema", async () => {
  const tableName = uniqueTable();
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    const kv = new PostgresKvStore(sql, { tableName, schema: tableName });
    await kv.set(["a", "b"], { n: 1 });
    await kv[Symbol.asyncDispose]();
    const rows = await sql.unsafe(`SELECT key, value FROM "${tableName}"."${tableName}"`);
    assertEquals(rows.length, 1);
    assertEquals(rows[0].key, ["a", "b"]);
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${tableName}" CASCADE`);
    await sql.end({ timeout: 5 });
  }
});
