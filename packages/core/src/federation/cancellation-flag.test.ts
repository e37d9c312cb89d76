// Cancellation costs nothing until it is used: a federation that never
// cancels reads no marker, and a cancellation from another federation
// sharing the stores still stops a queued task.
import { assert, assertEquals, deferred, test, waitUntil } from "@fedify/fixture";
import { z } from "zod";
import { RecordingKvStore } from "../kv/testdata/recording-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { createFederation } from "./federation.ts";

/** How many cancellation markers the store was asked for. */
function markerReads(kv: RecordingKvStore): number {
  return kv.reads.filter((key) => key.startsWith("fedwork/task-cancelled/")).length;
}

const schema = z.object({ n: z.number() });

test("a federation that never cancels a task reads no cancellation marker", async () => {
  const kv = new RecordingKvStore();
  const federation = createFederation<void>({
    kv,
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  const ran: number[] = [];
  const task = federation.defineTask("count", {
    schema,
    handler: (_ctx, { n }) => void ran.push(n),
  });
  const ctx = federation.createContext(new URL("https://app.example/"), undefined);
  await ctx.enqueueTaskMany(task, Array.from({ length: 20 }, (_, n) => ({ n })));
  const stop = new AbortController();
  const running = federation.startQueue(undefined, { signal: stop.signal });
  try {
    await waitUntil(() => ran.length === 20, { what: () => `20 runs (ran ${ran.length})` });
  } finally {
    stop.abort();
    await running;
  }
  assertEquals(markerReads(kv), 0);
  assert(kv.reads.includes("fedwork/task-cancel-requested"));
});

test("a queued task cancelled from another federation sharing the store is not run", async () => {
  const kv = new RecordingKvStore();
  const queue = new InProcessMessageQueue();
  const worker = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  const caller = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  const gate = deferred<void>();
  const ran: number[] = [];
  const define = (federation: typeof worker) =>
    federation.defineTask("ordered", {
      schema,
      async handler(_ctx, { n }) {
        ran.push(n);
        if (n === 1) await gate.promise;
      },
    });
  const task = define(worker);
  define(caller);
  const acked: string[] = [];
  worker.on("cancelled", (event) => void acked.push(event.messageId));
  const ctx = worker.createContext(new URL("https://app.example/"), undefined);
  // One ordering key: the second runs only once the first has returned.
  const first = await ctx.enqueueTask(task, { n: 1 }, { orderingKey: "line" });
  const second = await ctx.enqueueTask(task, { n: 2 }, { orderingKey: "line" });
  assert(first.status === "enqueued" && second.status === "enqueued");
  const stop = new AbortController();
  const running = worker.startQueue(undefined, { signal: stop.signal });
  try {
    // The first run read the flag, found none and keeps that answer.
    await waitUntil(() => ran.includes(1), { what: "the first task to start" });
    assertEquals(await caller.cancelTask(second.messageId), {
      status: "cancelled",
      id: second.messageId,
      state: "queued",
    });
    gate.resolve();
    await waitUntil(
      async () => (await worker.getTaskStatus(first.messageId))?.state === "completed",
      { what: "the first task to complete" },
    );
    // The worker takes the second off the queue without running it.
    await waitUntil(() => acked.length > 0, { what: "the worker to drop the cancelled task" });
  } finally {
    stop.abort();
    await running;
  }
  assertEquals(ran, [1]);
  assertEquals(acked, [second.messageId]);
  assert(markerReads(kv) > 0);
  assertEquals((await worker.getTaskStatus(second.messageId))?.state, "cancelled");
});
