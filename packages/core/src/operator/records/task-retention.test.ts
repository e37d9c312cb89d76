// A task's own completedRetention / failedRetention overrides the
// federation's, on the in-memory store (SQLite: packages/sqlite).
import { assertEquals, assertThrows, test, waitUntil } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../../federation/federation.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { PermanentError } from "../../processing/errors.ts";
import { TaskDefinitionError } from "../../tasks/errors.ts";

/**
 * Runs one task of each retention through a federation on `kv` (which
 * keeps failed tasks and no completed ones) and checks what is kept.
 */
async function checkTaskRetention(kv: KvStore): Promise<void> {
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
    const failed = (await federation.listFailedTasks()).records.map((r) => r.taskName).sort();
    assertEquals(failed, ["audited", "brief", "plain"]);
    const completed = (await federation.listCompletedTasks()).records.map((r) => r.taskName);
    assertEquals(completed, ["audited"]);
    await waitUntil(
      async () => !(await federation.listFailedTasks()).records.some((r) => r.taskName === "brief"),
      { what: "the brief task's failure to expire" },
    );
    assertEquals(
      (await federation.listFailedTasks()).records.map((r) => r.taskName).sort(),
      ["audited", "plain"],
    );
  } finally {
    controller.abort();
    await worker;
  }
}

test("a task's own retention overrides the federation's on MemoryKvStore", async () => {
  await checkTaskRetention(new MemoryKvStore());
});

test("defineTask refuses a retention that is not a duration, naming the option", () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  const schema = z.object({});
  const error = assertThrows(
    () =>
      federation.defineTask("a", {
        schema,
        handler: () => {},
        completedRetention: "forever",
      }),
    TaskDefinitionError,
    "completedRetention",
  );
  assertEquals(error.option, "completedRetention");
  assertThrows(
    () => federation.defineTask("b", { schema, handler: () => {}, failedRetention: { days: -1 } }),
    TaskDefinitionError,
    "failedRetention",
  );
});
