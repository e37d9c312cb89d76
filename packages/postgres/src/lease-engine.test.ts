// The wait a PostgreSQL listener asks for after a short claim, checked on
// the engine itself (no listener, no timers): what each claim returns is
// the decision, so nothing here depends on how long anything takes.
import { assertEquals, deferred, test } from "@fedify/fixture";
import postgres from "postgres";
import { POSTGRES_URL } from "./testdata/conformance-factory.ts";
import type { LeaseClaimResult } from "@fedwork/core/queue-kit";
import { type LeasedRow, PostgresLeaseEngine, RECLAIM_MS } from "./lease-engine.ts";
import { PostgresMessageQueue } from "./message-queue.ts";
import { buildMessageQueueStatements } from "./sql/message-queue.ts";

const LEASE_MS = 30_000;

interface Fixture extends AsyncDisposable {
  readonly table: string;
  readonly queue: PostgresMessageQueue;
  /** A second client, for locks and notifications the engine does not own. */
  readonly admin: postgres.Sql;
  readonly engine: PostgresLeaseEngine;
  /** Claims up to `count` with nothing to acknowledge. */
  claim(count: number): ReturnType<PostgresLeaseEngine["claim"]>;
}

/** How long the listener would sleep after `result`. */
async function waitAfter(result: LeaseClaimResult<LeasedRow>): Promise<number | undefined> {
  return result.nextWake == null ? result.waitMs : await result.nextWake();
}

async function fixture(): Promise<Fixture> {
  const table = `fedwork_pgtest_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const queue = new PostgresMessageQueue(POSTGRES_URL, { tableName: table });
  await queue.initialize();
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
  const engine = new PostgresLeaseEngine({
    sql,
    statements: buildMessageQueueStatements(table),
    channel: table,
    leaseMs: LEASE_MS,
    initialize: () => Promise.resolve(),
  });
  return {
    table,
    queue,
    admin,
    engine,
    claim: (count) => engine.claim({ count, acks: [], handBacks: [], held: [] }),
    async [Symbol.asyncDispose]() {
      await engine.close();
      await queue.drop();
      await queue[Symbol.asyncDispose]();
      await sql.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
    },
  };
}

test("PostgresLeaseEngine claims again soon, backing off, while another transaction locks a claimable row", async () => {
  await using f = await fixture();
  await f.queue.enqueue("locked");
  const locked = deferred<void>();
  const unlock = deferred<void>();
  const locking = f.admin.begin(async (tx) => {
    await tx.unsafe(`SELECT id FROM "${f.table}" FOR UPDATE`);
    locked.resolve();
    await unlock.promise;
  });
  try {
    await locked.promise;
    // SKIP LOCKED passes the row over, and no notification will say that
    // the lock is gone: without the short wait, the listener would sleep
    // until its poll.
    const first = await f.claim(4);
    assertEquals(first.messages, []);
    assertEquals(await waitAfter(first), RECLAIM_MS);
    const second = await f.claim(4);
    assertEquals(second.messages, []);
    assertEquals(await waitAfter(second), RECLAIM_MS * 2);
  } finally {
    unlock.resolve();
    await locking;
  }
  const third = await f.claim(4);
  assertEquals(third.messages.map((m) => f.engine.decode(m)), ["locked"]);
  assertEquals(await waitAfter(third), undefined);
  // The back-off starts over.
  // Inserted without a notification, which would reach the subscribed
  // engine and make it skip the wait query.
  await f.admin.unsafe(`INSERT INTO "${f.table}" (message) VALUES ('"locked again"')`);
  const relocked = deferred<void>();
  const reunlock = deferred<void>();
  const relocking = f.admin.begin(async (tx) => {
    await tx.unsafe(
      `SELECT id FROM "${f.table}" WHERE message::text = '"locked again"' FOR UPDATE`,
    );
    relocked.resolve();
    await reunlock.promise;
  });
  try {
    await relocked.promise;
    const fourth = await f.engine.claim({
      count: 4,
      acks: [],
      handBacks: [],
      held: third.messages,
    });
    assertEquals(fourth.messages, []);
    assertEquals(await waitAfter(fourth), RECLAIM_MS);
  } finally {
    reunlock.resolve();
    await relocking;
  }
});

test("PostgresLeaseEngine sleeps after a short claim when nothing claimable is left", async () => {
  await using f = await fixture();
  // The second row of a key waits for the first, which this listener runs:
  // not claimable, so no early claim (it would repeat until the first is
  // acknowledged).  Enqueued before the engine subscribes, so that their
  // notifications do not reach it.
  await f.queue.enqueue("k1", { orderingKey: "k" });
  await f.queue.enqueue("k2", { orderingKey: "k" });
  const keyed = await f.claim(4);
  assertEquals(keyed.messages.map((m) => f.engine.decode(m)), ["k1"]);
  assertEquals(await waitAfter(keyed), undefined);
});

test("PostgresLeaseEngine skips the wait query when a notification came during the claim", async () => {
  await using f = await fixture();
  let woken = deferred<void>();
  f.engine.subscribe(() => woken.resolve());
  // The first claim subscribes to the channel; nothing to wait for.
  const empty = await f.claim(4);
  assertEquals(empty.messages, []);
  assertEquals(await waitAfter(empty), undefined);
  // Subscribing wakes the engine too (postgres.js calls back once it
  // listens): only a wake-up from here on is the notification's.
  woken = deferred<void>();
  const tableLocked = deferred<void>();
  const unlock = deferred<void>();
  // An exclusive table lock holds the claim's UPDATE (not its SKIP LOCKED
  // rows) until the notification has arrived.
  const locking = f.admin.begin(async (tx) => {
    await tx.unsafe(`LOCK TABLE "${f.table}" IN EXCLUSIVE MODE`);
    tableLocked.resolve();
    await unlock.promise;
  });
  let claiming: ReturnType<Fixture["claim"]> | undefined;
  try {
    await tableLocked.promise;
    claiming = f.claim(4);
    // Wait until the claim is blocked on the lock, so that the notification
    // certainly comes while it is out.
    for (;;) {
      const [{ waiting }] = await f.admin`
        SELECT count(*)::int AS waiting FROM pg_locks
        WHERE relation = ${f.table}::regclass AND NOT granted`;
      if (waiting > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await f.admin`SELECT pg_notify(${f.table}, '')`;
    await woken.promise;
  } finally {
    unlock.resolve();
    await locking;
  }
  // Empty table: without the notification the listener would be told to
  // run the wait query (nextWake) and sleep until the poll.
  assertEquals(await claiming, { messages: [], waitMs: 0 });
});
