// SQLite's "database is locked" between processes sharing a Deno KV file:
// tried again, never committed twice, and other errors left alone.
import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import type { DenoKv, DenoKvAtomicOperation, DenoKvEntry, DenoKvKey } from "./deno-kv.ts";
import { isDatabaseLocked, retryWhileLocked, withLockRetries } from "./lock-retries.ts";
import { DenoKvMessageQueue } from "./message-queue.ts";
import { cleanup, databasePath, openKvFile } from "./testdata/conformance-factory.ts";

/** The error as the @deno/kv npm package throws it. */
const locked = () => Object.assign(new Error("database is locked"), { code: "GenericFailure" });

test("isDatabaseLocked() knows SQLite's lock conflict and nothing else", () => {
  assert(isDatabaseLocked(locked()));
  assert(isDatabaseLocked(new Error("SQLITE_BUSY: database is locked")));
  assert(!isDatabaseLocked(new Error("disk I/O error")));
  assert(!isDatabaseLocked("database is locked"));
});

test("retryWhileLocked() tries a locked operation again and leaves other errors alone", async () => {
  let tries = 0;
  const value = await retryWhileLocked(() => {
    if (++tries < 3) return Promise.reject(locked());
    return Promise.resolve("written");
  });
  assertEquals([value, tries], ["written", 3]);
  let others = 0;
  await assertRejects(
    () => retryWhileLocked(() => (others++, Promise.reject(new Error("disk I/O error")))),
    Error,
    "disk I/O error",
  );
  assertEquals(others, 1);
});

test("retryWhileLocked() gives up after its last try with the lock error", async () => {
  let tries = 0;
  await assertRejects(
    () => retryWhileLocked(() => (tries++, Promise.reject(locked()))),
    Error,
    "database is locked",
  );
  assertEquals(tries, 12);
});

/**
 * A database whose first commits fail with the lock error; it records what
 * each atomic operation was given and which ones were committed.
 */
function lockedAtFirst(failures: number) {
  const operations: { steps: string[]; committed: boolean }[] = [];
  let listings = 0;
  const kv: DenoKv = {
    get: (key) => Promise.resolve({ key, value: null, versionstamp: null }),
    list: async function* (): AsyncIterable<DenoKvEntry> {
      if (listings++ < failures) throw locked();
      yield { key: ["a"], value: 1, versionstamp: "1" };
      yield { key: ["b"], value: 2, versionstamp: "2" };
    },
    atomic(): DenoKvAtomicOperation {
      const record = { steps: [] as string[], committed: false };
      operations.push(record);
      const operation: DenoKvAtomicOperation = {
        check: (...checks) => (record.steps.push(`check ${checks.length}`), operation),
        set: (key: DenoKvKey, value: unknown, options?: { expireIn?: number }) => (
          record.steps.push(`set ${String(key)}=${value} ${options?.expireIn ?? "-"}`), operation
        ),
        delete: (key: DenoKvKey) => (record.steps.push(`delete ${String(key)}`), operation),
        commit: () => {
          if (operations.length <= failures) return Promise.reject(locked());
          record.committed = true;
          return Promise.resolve({ ok: true });
        },
      };
      return operation;
    },
  };
  return { kv, operations, listings: () => listings };
}

test("an atomic commit that meets the lock is replayed whole on a fresh operation", async () => {
  const { kv, operations } = lockedAtFirst(2);
  const result = await withLockRetries(kv).atomic()
    .check({ key: ["k"], versionstamp: null })
    .set(["k"], 1, { expireIn: 500 })
    .delete(["old"])
    .commit();
  assertEquals(result.ok, true);
  assertEquals(operations.length, 3);
  for (const operation of operations) {
    assertEquals(operation.steps, ["check 1", "set k=1 500", "delete old"]);
  }
  assertEquals(operations.map((operation) => operation.committed), [false, false, true]);
});

test("a listing that meets the lock before its first entry starts again", async () => {
  const { kv, listings } = lockedAtFirst(1);
  const keys: string[] = [];
  for await (const entry of withLockRetries(kv).list({ prefix: [] })) keys.push(String(entry.key));
  assertEquals(keys, ["a", "b"]);
  assertEquals(listings(), 2);
});

test("two handles on one Deno KV file race to deduplicate and add one message", async () => {
  const namespace = `fedwork-denokv-lock-test-${crypto.randomUUID()}`;
  const first = await openKvFile(databasePath(namespace));
  const second = await openKvFile(databasePath(namespace));
  try {
    const queues = [first, second].map((opened) => new DenoKvMessageQueue({ kv: opened.kv }));
    const added = await Promise.all(
      queues.flatMap((queue) =>
        Array.from({ length: 25 }, (_, i) =>
          queue.enqueueDeduplicated({ i }, {
            deduplicationKey: "k",
            deduplicationTtl: { minutes: 5 },
          }))
      ),
    );
    assertEquals(added.filter(Boolean).length, 1);
    assertEquals((await queues[0].getDepth()).queued, 1);
    for (const queue of queues) await queue[Symbol.asyncDispose]();
  } finally {
    first.close();
    second.close();
    await cleanup(namespace);
  }
});
