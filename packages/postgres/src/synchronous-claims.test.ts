// synchronousClaims: whether a listener's own statements wait for their
// commit's disk flush.  Checked against a real PostgreSQL: which statements
// turn synchronous_commit off, that the condition they carry does turn it
// off for their transaction, and that it never leaks into the client's
// other queries.
import { assert, assertEquals, assertThrows, test, waitUntil } from "@fedify/fixture";
import postgres from "postgres";
import { POSTGRES_URL } from "./testdata/conformance-factory.ts";
import { PostgresMessageQueue } from "./message-queue.ts";

const ASYNC_COMMIT = /\(SELECT set_config\('synchronous_commit', 'off', true\)\) = 'off'/;

/** Which statements a queue sent while it enqueued and handled `count` messages. */
async function statementsOf(
  synchronousClaims: boolean | undefined,
  count: number,
): Promise<{ statements: string[]; before: string; after: string }> {
  const tableName = `fedwork_synctest_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const statements: string[] = [];
  // One connection, so that the setting read at the end is that of the
  // connection every statement ran on.
  const sql = postgres(POSTGRES_URL, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, query) => void statements.push(query),
  });
  const queue = new PostgresMessageQueue(sql, {
    tableName,
    pollInterval: { seconds: 1 },
    ...(synchronousClaims === undefined ? {} : { synchronousClaims }),
  });
  const controller = new AbortController();
  try {
    const [{ synchronous_commit: before }] = await sql`SHOW synchronous_commit`;
    statements.length = 0;
    const received: unknown[] = [];
    const listening = queue.listen((message) => void received.push(message), {
      signal: controller.signal,
    });
    for (let i = 0; i < count; i++) await queue.enqueue({ i });
    await waitUntil(() => received.length === count, { what: "every message" });
    // The acknowledgements ride on a later claim, or on the last call.
    controller.abort();
    await listening;
    assertEquals(await queue.getDepth(), { queued: 0, ready: 0, delayed: 0 });
    const [{ synchronous_commit: after }] = await sql`SHOW synchronous_commit`;
    return { statements, before, after };
  } finally {
    controller.abort();
    await queue[Symbol.asyncDispose]();
    await sql.unsafe(`DROP TABLE IF EXISTS "${tableName}"`);
    await sql.end({ timeout: 5 });
  }
}

const isListenerStatement = (text: string) =>
  /lease_owner = \$\d::uuid/.test(text) && !/SET message = coalesce/.test(text);

test("PostgresMessageQueue's claims and acknowledgements commit without a disk flush by default, and never change the client's setting", async () => {
  const { statements, before, after } = await statementsOf(undefined, 5);
  const listener = statements.filter(isListenerStatement);
  assert(listener.some((text) => /FOR UPDATE SKIP LOCKED/.test(text)), "no claim was sent");
  assert(listener.some((text) => /DELETE FROM/.test(text)), "no acknowledgement was sent");
  for (const text of listener) assert(ASYNC_COMMIT.test(text), `synchronous: ${text}`);
  // Enqueues always wait for their flush.
  const enqueues = statements.filter((text) => /INSERT INTO/.test(text));
  assert(enqueues.length > 0);
  for (const text of enqueues) assert(!ASYNC_COMMIT.test(text), `asynchronous: ${text}`);
  // The condition is local to each statement's own transaction.
  assertEquals(after, before);
});

test("PostgresMessageQueue with synchronousClaims: true sends no statement that turns synchronous_commit off", async () => {
  const { statements } = await statementsOf(true, 5);
  assert(statements.some((text) => /FOR UPDATE SKIP LOCKED/.test(text)), "no claim was sent");
  for (const text of statements) assert(!ASYNC_COMMIT.test(text), `asynchronous: ${text}`);
});

test("The condition PostgresMessageQueue's listener statements carry turns synchronous_commit off for their transaction only", async () => {
  const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    const [{ synchronous_commit: before }] = await sql`SHOW synchronous_commit`;
    const condition = ASYNC_COMMIT.source.replaceAll("\\", "");
    const inside = await sql.begin(async (tx) => {
      const [{ one }] = await tx.unsafe(`SELECT 1 AS one WHERE ${condition}`);
      assertEquals(one, 1);
      const [{ synchronous_commit }] = await tx`SHOW synchronous_commit`;
      return synchronous_commit;
    });
    assertEquals(inside, "off");
    const [{ synchronous_commit: after }] = await sql`SHOW synchronous_commit`;
    assertEquals(after, before);
  } finally {
    await sql.end({ timeout: 5 });
  }
});

test("new PostgresMessageQueue() refuses a synchronousClaims that is not a boolean, naming it", () => {
  assertThrows(
    // @ts-expect-error: not a boolean
    () => new PostgresMessageQueue(POSTGRES_URL, { synchronousClaims: "yes" }),
    TypeError,
    "synchronousClaims must be a boolean",
  );
});
