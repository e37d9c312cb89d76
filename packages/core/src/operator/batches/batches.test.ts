// Task batches end to end on a real in-process queue and the memory store:
// the completion task runs once with the counts, members that are retried
// are not done until they are, a running member adds members (fan-out),
// progress is watchable, and members delivered twice count once.
import { assert, assertEquals, assertRejects, test, waitUntil, within } from "@fedify/fixture";
import { z } from "zod";
import { createFederation, type Federation } from "../../federation/federation.ts";
import { withWorkers } from "../../federation/testdata/test-support.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { PermanentError } from "../../processing/errors.ts";
import type { MessageQueueEnqueueOptions } from "../../queue/message-queue.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { createExponentialBackoffPolicy } from "../../retry/exponential-backoff.ts";
import { TaskValidationError } from "../../tasks/errors.ts";
import type { BatchCompletion, BatchStatus } from "./types.ts";

const base = new URL("https://example.com/");

const completionSchema = z.object({
  batchId: z.string(),
  total: z.number(),
  completed: z.number(),
  failed: z.number(),
  failedIds: z.array(z.string()),
  data: z.object({ userId: z.string() }),
});

function federationOn(queue: InProcessMessageQueue): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    taskRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 1 },
      maxDelay: { milliseconds: 5 },
      maxAttempts: 3,
      jitter: false,
    }),
  });
}

test("a batch's completion task runs once, after every member, with the counts", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const attempts = new Map<number, number>();
  const lookUp = federation.defineTask("look-up", {
    schema: z.object({ n: z.number() }),
    handler(_ctx, { n }) {
      const attempt = (attempts.get(n) ?? 0) + 1;
      attempts.set(n, attempt);
      if (n % 5 === 0) throw new PermanentError(`account ${n} is gone`);
      // Fails its first attempt: a member that will be retried is not done.
      if (n === 3 && attempt === 1) throw new Error("flaky");
    },
  });
  const completions: BatchCompletion<{ userId: string }>[] = [];
  const finished = federation.defineTask("import-finished", {
    schema: completionSchema,
    handler(_ctx, completion) {
      // Every member ran to its end before the completion task.
      assertEquals(attempts.get(3), 2);
      completions.push(completion);
    },
  });
  const ctx = federation.createContext(base, undefined);
  const members = Array.from({ length: 12 }, (_, n) => ({ task: lookUp, data: { n } }));
  const { batchId, memberIds } = await ctx.enqueueBatch(members, {
    onComplete: finished,
    data: { userId: "alice" },
  });
  assertEquals(memberIds.length, 12);
  const before = await federation.getBatchStatus(batchId);
  assertEquals(before?.state, "running");
  assertEquals(before?.pending, 12);
  assertEquals(before?.progress, 0);
  await withWorkers(federation, async () => {
    await waitUntil(async () => (await federation.getBatchStatus(batchId))?.state === "completed", {
      what: "the batch to complete",
    });
    await waitUntil(() => completions.length > 0, { what: "the completion task to run" });
  });
  assertEquals(completions.length, 1);
  const [completion] = completions;
  assertEquals(completion.batchId, batchId);
  assertEquals(completion.total, 12);
  assertEquals(completion.failed, 3); // 0, 5, 10
  assertEquals(completion.completed, 9);
  assertEquals(
    [...completion.failedIds].sort(),
    [memberIds[0], memberIds[5], memberIds[10]].sort(),
  );
  assertEquals(completion.data, { userId: "alice" });
  const status = await federation.getBatchStatus(batchId);
  assertEquals(status?.progress, 1);
  assertEquals(status?.pending, 0);
  assert(status?.completionTaskId != null);
  assertEquals((await federation.getTaskStatus(status.completionTaskId))?.state, "completed");
});

test("a running member adds members; the batch waits for them and is sealed after", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const seen: number[] = [];
  let lateAdd: Promise<unknown> | undefined;
  const page = federation.defineTask("page", {
    schema: z.object({ page: z.number() }),
    async handler(ctx, { page }) {
      seen.push(page);
      // Each of the first three pages adds the next: a chain of fan-outs.
      if (page < 3) await ctx.addToBatch([{ task: pageTask(), data: { page: page + 1 } }]);
    },
  });
  const pageTask = () => page;
  const completions: BatchCompletion[] = [];
  const finished = federation.defineTask("pages-finished", {
    schema: completionSchema.extend({ data: z.null() }),
    handler(ctx, completion) {
      completions.push(completion);
      // A completion task is no member: it cannot add to the batch.
      lateAdd = (ctx as unknown as { addToBatch(m: unknown[]): Promise<unknown> })
        .addToBatch([{ task: page, data: { page: 9 } }]);
      lateAdd.catch(() => {});
    },
  });
  const ctx = federation.createContext(base, undefined);
  const { batchId } = await ctx.enqueueBatch([{ task: page, data: { page: 0 } }], {
    onComplete: finished,
  });
  const progress: BatchStatus[] = [];
  const watching = (async () => {
    for await (const status of federation.watchBatch(batchId)) progress.push(status);
  })();
  await withWorkers(federation, async () => {
    await waitUntil(() => completions.length > 0, { what: "the completion task to run" });
    await within(watching, "watchBatch() to end once the batch completed");
  });
  assertEquals(seen.sort(), [0, 1, 2, 3]);
  assertEquals(completions.length, 1);
  assertEquals(completions[0].total, 4);
  assertEquals(completions[0].completed, 4);
  assertEquals(completions[0].data, null);
  assertEquals(progress.at(-1)?.state, "completed");
  assertEquals(progress.at(-1)?.progress, 1);
  // The progress never went backwards to a smaller number done.
  const done = progress.map((status) => status.completed + status.failed);
  assertEquals(done, [...done].sort((a, b) => a - b));
  await assertRejects(() => lateAdd!, TypeError, "not a batch member");
});

test("a member delivered twice is counted once, and the completion task enqueued once", async () => {
  // A queue that hands out every batch member twice, as a queue does after
  // a worker died between finishing a member and acknowledging it.
  class DuplicatingQueue extends InProcessMessageQueue {
    override enqueue(message: unknown, options?: MessageQueueEnqueueOptions): Promise<void> {
      const member = (message as { batch?: { role?: string } }).batch?.role === "member";
      return member
        ? super.enqueue(message, options).then(() => super.enqueue(message, options))
        : super.enqueue(message, options);
    }
    override async enqueueMany(
      messages: readonly unknown[],
      options?: MessageQueueEnqueueOptions,
    ): Promise<void> {
      for (const message of messages) await this.enqueue(message, options);
    }
  }
  await using queue = new DuplicatingQueue();
  const federation = federationOn(queue);
  let runs = 0;
  const member = federation.defineTask("member", {
    schema: z.object({ n: z.number() }),
    handler: () => {
      runs++;
    },
  });
  const completions: BatchCompletion[] = [];
  const finished = federation.defineTask("finished", {
    schema: completionSchema.extend({ data: z.null() }),
    handler: (_ctx, completion) => {
      completions.push(completion);
    },
  });
  const ctx = federation.createContext(base, undefined);
  const { batchId } = await ctx.enqueueBatch(
    Array.from({ length: 10 }, (_, n) => ({ task: member, data: { n } })),
    { onComplete: finished },
  );
  await withWorkers(federation, async () => {
    await waitUntil(() => runs === 20 && completions.length > 0, {
      what: () => `every delivery to run (${runs} of 20) and the completion task`,
    });
    // Give a second completion task, if one were enqueued, time to run.
    await new Promise((resolve) => setTimeout(resolve, 200));
  });
  assertEquals(completions.length, 1);
  assertEquals(completions[0].total, 10);
  assertEquals(completions[0].completed, 10);
  assertEquals((await federation.getBatchStatus(batchId))?.completed, 10);
});

test("enqueueBatch() refuses what cannot work, before enqueueing anything", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const member = federation.defineTask("member", {
    schema: z.object({ n: z.number() }),
    handler: () => {},
  });
  const finished = federation.defineTask("finished", {
    schema: completionSchema,
    handler: () => {},
  });
  const other = createFederation<void>({ kv: new MemoryKvStore(), queue });
  const foreign = other.defineTask("foreign", { schema: completionSchema, handler: () => {} });
  const ctx = federation.createContext(base, undefined);
  const members = [{ task: member, data: { n: 1 } }];
  await assertRejects(
    () => ctx.enqueueBatch(members, { onComplete: foreign, data: { userId: "a" } }),
    TypeError,
    "onComplete",
  );
  await assertRejects(
    () =>
      ctx.enqueueBatch(
        members,
        { onComplete: finished, data: { userId: "a" }, onDone: 1 } as never,
      ),
    UnknownOptionError,
  );
  // The completion task's payload is checked up front: data it refuses.
  await assertRejects(
    () => ctx.enqueueBatch(members, { onComplete: finished, data: { user: 1 } as never }),
    TaskValidationError,
  );
  await assertRejects(
    () =>
      ctx.enqueueBatch(
        [{ task: member, data: { n: 1 }, options: { deduplicationKey: "x" } as never }],
        { onComplete: finished, data: { userId: "a" } },
      ),
    UnknownOptionError,
  );
  await assertRejects(
    () =>
      ctx.enqueueBatch([{ task: member, data: { n: "one" } as never }], {
        onComplete: finished,
        data: { userId: "a" },
      }),
    TaskValidationError,
  );
  assertEquals((await queue.getDepth()).queued, 0);
});
