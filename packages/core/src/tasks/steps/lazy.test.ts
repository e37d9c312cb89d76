// Durable steps cost nothing to a run that does not use them: no runner,
// no read of step state, no record.
import { assert, assertEquals, test, waitUntil } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../../federation/federation.ts";
import { withWorkers } from "../../federation/testdata/test-support.ts";
import { RecordingKvStore } from "../../kv/testdata/recording-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { stepRunnerOf } from "./mod.ts";

test("a run that never touches ctx.step has no step runner and reads or writes no step record", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new RecordingKvStore();
  const federation = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  const runners: unknown[] = [];
  const plain = federation.defineTask("plain", {
    schema: z.object({ n: z.number() }),
    handler: (ctx) => void runners.push(stepRunnerOf(ctx.task)),
  });
  const stepped = federation.defineTask("stepped", {
    schema: z.object({}),
    handler: async (ctx) => {
      const before = stepRunnerOf(ctx.task);
      const value = await ctx.step.run("one", () => 1);
      return { before: before == null, after: stepRunnerOf(ctx.task) != null, value };
    },
  });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  await ctx.enqueueTaskMany(plain, [{ n: 1 }, { n: 2 }, { n: 3 }]);
  await withWorkers(federation, async () => {
    await waitUntil(() => runners.length === 3, { what: "the three plain runs" });
  });
  assertEquals(runners, [undefined, undefined, undefined]);
  assertEquals(kv.touched("fedwork/steps/"), []);
  // A run that does use them gets its runner on first use, and records.
  const enqueued = await ctx.enqueueTask(stepped, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    await waitUntil(
      async () => (await federation.getTaskStatus(enqueued.messageId))?.state === "completed",
      { what: "the stepped run to complete" },
    );
  });
  assertEquals((await federation.getTaskStatus(enqueued.messageId))?.result, {
    before: true,
    after: true,
    value: 1,
  });
  assert(kv.touched("fedwork/steps/").length > 0);
});
