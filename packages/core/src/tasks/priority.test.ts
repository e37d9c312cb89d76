// Task priority through the federation: the option on enqueueTask() and
// defineTask(), its checks, and the order an in-process worker runs tasks in.
import { assertEquals, assertRejects, assertThrows, deferred, test, within } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../federation/federation.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import { PermanentError } from "../processing/errors.ts";
import { TaskDefinitionError } from "./errors.ts";

const base = new URL("https://web.example/");

function setUp(queue: MessageQueue = new InProcessMessageQueue()) {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  const ran: string[] = [];
  let expected = Infinity;
  const all = deferred<void>();
  const handler = (_ctx: unknown, data: { label: string }) => {
    ran.push(data.label);
    if (ran.length >= expected) all.resolve();
  };
  const schema = z.object({ label: z.string() });
  const plain = federation.defineTask("plain", { schema, handler });
  const urgent = federation.defineTask("urgent", { schema, handler, priority: 3 });
  const ctx = federation.createContext(base, undefined);
  const run = async (count: number) => {
    expected = count;
    const controller = new AbortController();
    const worker = federation.startQueue(undefined, { signal: controller.signal });
    try {
      await within(all.promise, `${count} tasks to run; ran ${ran}`);
    } finally {
      controller.abort();
      await worker;
    }
    return ran;
  };
  return { federation, ctx, plain, urgent, run };
}

test("a task of higher priority runs before queued tasks of lower priority", async () => {
  const { ctx, plain, urgent, run } = setUp();
  await ctx.enqueueTaskMany(plain, [{ label: "a" }, { label: "b" }]);
  await ctx.enqueueTask(plain, { label: "bulk" }, { priority: -1 });
  await ctx.enqueueTask(urgent, { label: "urgent" });
  await ctx.enqueueTask(plain, { label: "c" }, { priority: 1 });
  await ctx.enqueueTask(urgent, { label: "demoted" }, { priority: 0 });
  assertEquals(await run(6), ["urgent", "c", "a", "b", "demoted", "bulk"]);
});

test("tasks sharing an ordering key keep their order whatever their priorities", async () => {
  const { ctx, plain, run } = setUp();
  await ctx.enqueueTask(plain, { label: "k1" }, { orderingKey: "k", priority: -2 });
  await ctx.enqueueTask(plain, { label: "free" });
  await ctx.enqueueTask(plain, { label: "k2" }, { orderingKey: "k", priority: 5 });
  // k2 may not pass k1; the key runs at the priority of its first task.
  assertEquals(await run(3), ["free", "k1", "k2"]);
});

test("enqueueTask refuses a priority outside -5 to 5, naming the option", async () => {
  const { ctx, plain } = setUp();
  for (const priority of [6, -6, 1.5, Number.NaN]) {
    const error = await assertRejects(
      () => ctx.enqueueTask(plain, { label: "x" }, { priority }),
      RangeError,
    );
    assertEquals(error.message.includes("priority option must be an integer from -5 to 5"), true);
  }
});

test("defineTask refuses an invalid priority at definition time", () => {
  const { federation } = setUp();
  const error = assertThrows(
    () =>
      federation.defineTask("bad", {
        schema: z.object({}),
        handler: () => {},
        priority: 10,
      }),
    TaskDefinitionError,
  );
  assertEquals(error.option, "priority");
});

test("a priority is refused for a queue that cannot order by priority", async () => {
  // A queue written for Fedify: it has no nativePriority and would ignore
  // the option.
  const inner = new InProcessMessageQueue();
  const fedifyLike: MessageQueue = {
    enqueue: (message, options) => inner.enqueue(message, { delay: options?.delay }),
    listen: (handler, options) => inner.listen(handler, options),
  };
  const { ctx, plain, urgent } = setUp(fedifyLike);
  const error = await assertRejects(
    () => ctx.enqueueTask(plain, { label: "x" }, { priority: 2 }),
    TypeError,
  );
  assertEquals(error.message.includes("does not order messages by priority"), true);
  // The task's own default is refused the same way, and nothing was queued.
  await assertRejects(() => ctx.enqueueTask(urgent, { label: "y" }), TypeError);
  assertEquals((await inner.getDepth()).queued, 0);
  // Priority 0 is what every queue does.
  await ctx.enqueueTask(plain, { label: "z" }, { priority: 0 });
  assertEquals((await inner.getDepth()).queued, 1);
});

test("a failed task replayed with retryFailedTask() keeps its task's priority", async () => {
  // The real queue, with its enqueue options recorded.
  const inner = new InProcessMessageQueue();
  const given: (number | undefined)[] = [];
  const queue: MessageQueue = {
    nativePriority: true,
    enqueue: (message, options) => {
      given.push(options?.priority);
      return inner.enqueue(message, options);
    },
    listen: (handler, options) => inner.listen(handler, options),
  };
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  let fail = true;
  const task = federation.defineTask("flaky", {
    schema: z.object({}),
    handler: () => {
      if (fail) throw new PermanentError("not yet");
    },
    priority: 2,
  });
  const failed = deferred<void>();
  const completed = deferred<void>();
  federation.on("failed", () => failed.resolve());
  federation.on("completed", () => completed.resolve());
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const result = await federation.createContext(base, undefined).enqueueTask(task, {});
    assertEquals(result.status, "enqueued");
    await within(failed.promise, "the task to fail");
    fail = false;
    await federation.retryFailedTask(result.status === "enqueued" ? result.messageId : "");
    await within(completed.promise, "the replay to complete");
  } finally {
    controller.abort();
    await worker;
  }
  assertEquals(given, [2, 2]);
});
