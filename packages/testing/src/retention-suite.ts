import {
  createFederation,
  type Federation,
  InProcessMessageQueue,
  PermanentError,
} from "@fedwork/core";
import type { FailedDeliveryConformanceOptions } from "./failed-delivery-suite.ts";
import { passThrough, withStore } from "./store-suite.ts";
import { assertEquals, test } from "./test-runner.ts";
import { waitUntil } from "./wait.ts";

/**
 * Options for {@link testTaskRetention}: the store's name and how to open
 * it, like `testFailedDeliveries()`'s.
 * @since 0.3.0
 */
export type TaskRetentionConformanceOptions = FailedDeliveryConformanceOptions;

/** How long the short-lived failure is kept: long enough to be seen. */
const BRIEF_RETENTION_MS = 2_000;

/**
 * Registers the test of per-task retention over a key–value store: with a
 * federation that keeps failed runs and no completed ones, a task's own
 * `failedRetention: 0` keeps none of its failures, its own
 * `completedRetention` keeps its completed runs, and a short
 * `failedRetention` makes its failure expire from the store while the
 * others stay.
 * @param options The store's name and how to open it.
 * @since 0.3.0
 */
export function testTaskRetention(options: TaskRetentionConformanceOptions): void {
  test(`${options.name}: a task's own retention overrides the federation's`, () =>
    withStore(options, async (open) => {
      await using queue = new InProcessMessageQueue();
      const federation = createFederation<void>({
        kv: await open(),
        queue,
        manuallyStartQueue: true,
        taskRetryPolicy: () => null,
        failedTaskRetention: { days: 1 },
        completedTaskRetention: 0,
      });
      const schema = passThrough<{ fail: boolean }>();
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
        failedRetention: { milliseconds: BRIEF_RETENTION_MS },
      });
      let settled = 0;
      federation.on("completed", () => void settled++);
      federation.on("failed", () => void settled++);
      const failedNames = async (fed: Federation<void>) =>
        (await fed.listFailedTasks()).records.map((record) => record.taskName)
          .sort();
      const controller = new AbortController();
      const worker = federation.startQueue(undefined, { signal: controller.signal });
      try {
        const ctx = federation.createContext(new URL("https://app.example/"), undefined);
        // The short-lived failure first, watched closely: it must be seen
        // in the store before it expires.
        await ctx.enqueueTask(brief, { fail: true });
        await waitUntil(async () => (await failedNames(federation)).includes("brief"), {
          what: "the brief task's failure to be kept",
          intervalMs: 20,
        });
        for (const task of [plain, bulky, audited]) {
          await ctx.enqueueTask(task, { fail: true });
          await ctx.enqueueTask(task, { fail: false });
        }
        await waitUntil(() => settled === 7, {
          what: () => `seven tasks to settle; got ${settled}`,
        });
        const completed = (await federation.listCompletedTasks()).records.map((r) => r.taskName);
        assertEquals(completed, ["audited"]);
        await waitUntil(async () => !(await failedNames(federation)).includes("brief"), {
          what: "the brief task's failure to expire",
        });
        assertEquals(await failedNames(federation), ["audited", "plain"]);
        assertEquals((await federation.countFailedTasks()).get("brief") ?? 0, 0);
      } finally {
        controller.abort();
        await worker;
      }
    }));
}
