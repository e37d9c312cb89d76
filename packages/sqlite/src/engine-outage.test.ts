// A real engine fault, not an injected one: another connection holds
// SQLite's write lock past busyTimeout while a task fails, so its retry
// cannot be stored.  The task must run again once the lock is released.
import { assertEquals, deferred, test, within, withLogs } from "@fedify/fixture";
import { createFederation, MemoryKvStore, millisecondsToDuration } from "@fedwork/core";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { openSqliteDatabase } from "./driver.ts";
import { SqliteMessageQueue } from "./message-queue.ts";

const payloadSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "test",
    validate: (value: unknown) =>
      typeof value === "string" ? { value } : { issues: [{ message: "Expected a string." }] },
    types: undefined as unknown as { input: string; output: string },
  },
};

test("a task failing while the SQLite file is locked runs again once the lock is released", async () => {
  const namespace = `fedwork-sqlite-outage-${crypto.randomUUID()}`;
  const path = databasePath(namespace);
  try {
    await withLogs(async () => {
      await using queue = new SqliteMessageQueue({
        path,
        busyTimeout: { milliseconds: 50 },
        leaseTime: { milliseconds: 600 },
        pollInterval: { milliseconds: 100 },
      });
      const federation = createFederation<void>({
        kv: new MemoryKvStore(),
        queue: { task: queue },
        manuallyStartQueue: true,
        taskRetryPolicy: () => millisecondsToDuration(10),
      });
      const attempts: number[] = [];
      const locked = deferred();
      const completed = deferred();
      const locker = await openSqliteDatabase(path);
      const task = federation.defineTask("outage", {
        schema: payloadSchema,
        handler(ctx) {
          attempts.push(ctx.task.attempt);
          if (attempts.length > 1) return;
          // The engine becomes unavailable to this worker, then the task fails.
          locker.exec("BEGIN IMMEDIATE");
          locked.resolve();
          throw new Error("fails while the database is locked");
        },
        on: { completed: () => completed.resolve() },
      });
      const retryNotStored = deferred();
      federation.on("retrying", (event) => {
        if (event.delay === undefined) retryNotStored.resolve();
      });
      const controller = new AbortController();
      const running = federation.startQueue(undefined, { signal: controller.signal });
      try {
        await federation.createContext(new URL("https://example.com/"), undefined)
          .enqueueTask(task, "keep me");
        await within(locked.promise, "the first attempt to take the lock and fail");
        await within(retryNotStored.promise, "the retry to fail to be stored");
        locker.exec("COMMIT");
        await within(completed.promise, "the task to run again after the outage");
      } finally {
        controller.abort();
        await running;
        locker.close();
      }
      // The retry was never stored: the queue's copy ran again as it was.
      assertEquals(attempts, [0, 0]);
    });
  } finally {
    await cleanup(namespace);
  }
});
