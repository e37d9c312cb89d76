// A task's own completedRetention / failedRetention on a durable store:
// the records a SQLite key–value store keeps, and their expiry.
import { assertEquals, test, waitUntil } from "@fedify/fixture";
import { createFederation, InProcessMessageQueue, PermanentError } from "@fedwork/core";
import { z } from "zod";
import { SqliteKvStore } from "./kv-store.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

test("a task's own retention overrides the federation's on SqliteKvStore", async () => {
  const namespace = `fedwork-sqlite-retention-${crypto.randomUUID()}`;
  try {
    await using kv = new SqliteKvStore({ path: databasePath(namespace) });
    await using queue = new InProcessMessageQueue();
    const federation = createFederation<void>({
      kv,
      queue,
      manuallyStartQueue: true,
      taskRetryPolicy: () => null,
    });
    const schema = z.object({ fail: z.boolean() });
    const handler = (_ctx: unknown, { fail }: { fail: boolean }) => {
      if (fail) throw new PermanentError("no");
    };
    const plain = federation.defineTask("plain", { schema, handler });
    const bulky = federation.defineTask("bulky", { schema, handler, failedRetention: 0 });
    const audited = federation.defineTask("audited", {
      schema,
      handler,
      completedRetention: { hours: 1 },
    });
    const brief = federation.defineTask("brief", {
      schema,
      handler,
      failedRetention: { milliseconds: 300 },
    });
    let settled = 0;
    federation.on("completed", () => void settled++);
    federation.on("failed", () => void settled++);
    const controller = new AbortController();
    const worker = federation.startQueue(undefined, { signal: controller.signal });
    try {
      const ctx = federation.createContext(new URL("https://example.com/"), undefined);
      for (const task of [plain, bulky, audited]) {
        await ctx.enqueueTask(task, { fail: true });
        await ctx.enqueueTask(task, { fail: false });
      }
      await ctx.enqueueTask(brief, { fail: true });
      await waitUntil(() => settled === 7, { what: "seven tasks to settle" });
      const failed = (await federation.listFailedTasks()).records.map((r) => r.taskName);
      assertEquals(failed.sort(), ["audited", "brief", "plain"]);
      const completed = (await federation.listCompletedTasks()).records.map((r) => r.taskName);
      assertEquals(completed, ["audited"]);
      await waitUntil(
        async () =>
          !(await federation.listFailedTasks()).records.some((r) => r.taskName === "brief"),
        { what: "the brief task's failure to expire" },
      );
      const left = (await federation.listFailedTasks()).records.map((r) => r.taskName);
      assertEquals(left.sort(), ["audited", "plain"]);
    } finally {
      controller.abort();
      await worker;
    }
  } finally {
    await cleanup(namespace);
  }
});
