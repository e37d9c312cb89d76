// Debounce and throttle on enqueue within one process: the option checks,
// enqueueTaskMany(), and that a task without them never reads their keys.
// Across processes on real engines they are tested by @fedwork/testing's
// testDebounceAndThrottle().
import { assert, assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../federation/federation.ts";
import type { KvKey } from "../kv/kv-store.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { TaskEnqueueOptions } from "./definition.ts";

const base = new URL("https://web.example/");

/** A memory store that counts the reads of flow-control keys. */
class CountingKvStore extends MemoryKvStore {
  flowReads = 0;
  override get<T = unknown>(key: KvKey): Promise<T | undefined> {
    if (key[1] === "task-debounce" || key[1] === "task-throttle") this.flowReads++;
    return super.get<T>(key);
  }
}

/** An in-process queue that refuses enqueues while `refuse` is set. */
class RefusingQueue extends InProcessMessageQueue {
  refuse = false;
  override enqueue(...args: Parameters<InProcessMessageQueue["enqueue"]>): Promise<void> {
    if (this.refuse) return Promise.reject(new Error("the queue is down"));
    return super.enqueue(...args);
  }
  override enqueueMany(...args: Parameters<InProcessMessageQueue["enqueueMany"]>): Promise<void> {
    if (this.refuse) return Promise.reject(new Error("the queue is down"));
    return super.enqueueMany(...args);
  }
}

function setUp() {
  const kv = new CountingKvStore();
  const queue = new RefusingQueue();
  const federation = createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
  });
  const ran: { key: string; n: number }[] = [];
  const dropped: string[] = [];
  let settle = () => {};
  const task = federation.defineTask("recount", {
    schema: z.object({ key: z.string(), n: z.number() }),
    handler: (_ctx, payload) => {
      ran.push(payload);
      settle();
    },
    on: {
      dropped: (event) => {
        dropped.push(event.reason);
        settle();
      },
    },
  });
  const ctx = federation.createContext(base, undefined);
  /** Resolves once `count` messages ran or were dropped. */
  const settled = async (count: number) => {
    const done = deferred<void>();
    settle = () => {
      if (ran.length + dropped.length >= count) done.resolve();
    };
    settle();
    await within(done.promise, `${count} outcomes`, 30_000);
  };
  return { kv, queue, federation, task, ctx, ran, dropped, settled };
}

const delay = { milliseconds: 200 };

test("a burst of debounced enqueues runs once, with the last payload", async () => {
  const { federation, task, ctx, ran, dropped, settled } = setUp();
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const results = [];
    for (let n = 0; n < 5; n++) {
      results.push(await ctx.enqueueTask(task, { key: "a", n }, { debounce: { key: "p", delay } }));
    }
    for (const result of results) {
      assert(result.status === "debounced", JSON.stringify(result));
      assertEquals(result.debounceKey, "p");
      assert(result.dueAt instanceof Date);
    }
    await settled(5);
    assertEquals(ran, [{ key: "a", n: 4 }]);
    assertEquals(dropped.length, 4);
    assert(dropped.every((reason) => reason.includes("superseded")), dropped[0]);
  } finally {
    controller.abort();
    await workers;
  }
});

test("a debounce delay shorter than an enqueue still runs the last payload", async () => {
  const { federation, task, ctx, ran, settled } = setUp();
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const option = { debounce: { key: "p", delay: { milliseconds: 1 } } };
    for (let n = 0; n < 20; n++) await ctx.enqueueTask(task, { key: "a", n }, option);
    await settled(20);
    // Earlier ones may have run before the next enqueue; the last one runs.
    assertEquals(ran.at(-1), { key: "a", n: 19 });
  } finally {
    controller.abort();
    await workers;
  }
});

test("a debounced enqueue the queue refuses leaves the previous payload to run", async () => {
  const { queue, federation, task, ctx, ran, dropped, settled } = setUp();
  await ctx.enqueueTask(task, { key: "a", n: 1 }, { debounce: { key: "p", delay } });
  queue.refuse = true;
  await assertRejects(
    () => ctx.enqueueTask(task, { key: "a", n: 2 }, { debounce: { key: "p", delay } }),
    Error,
    "the queue is down",
  );
  queue.refuse = false;
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await settled(1);
    assertEquals(ran, [{ key: "a", n: 1 }]);
    assertEquals(dropped, []);
  } finally {
    controller.abort();
    await workers;
  }
});

test("enqueueTaskMany debounces and throttles payload by payload, with a key function", async () => {
  const { federation, task, ctx, ran, settled } = setUp();
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const debounced = await ctx.enqueueTaskMany(task, [
      { key: "a", n: 1 },
      { key: "b", n: 2 },
      { key: "a", n: 3 },
    ], { debounce: { key: (payload) => payload.key, delay } });
    assertEquals(debounced.map((result) => result.status), ["debounced", "debounced", "debounced"]);
    await settled(3);
    assertEquals(ran.sort((x, y) => x.n - y.n), [{ key: "b", n: 2 }, { key: "a", n: 3 }]);
    const throttled = await ctx.enqueueTaskMany(task, [
      { key: "a", n: 4 },
      { key: "a", n: 5 },
      { key: "b", n: 6 },
    ], { throttle: { key: (payload) => payload.key, period: { hours: 1 } } });
    assertEquals(throttled.map((result) => result.status), ["enqueued", "throttled", "enqueued"]);
    assert(throttled[1].status === "throttled" && throttled[1].throttleKey === "a");
    assert(throttled[1].until.getTime() > Date.now() + 3_500_000);
    await settled(5);
  } finally {
    controller.abort();
    await workers;
  }
});

test("a task enqueued without debounce or throttle never reads their keys", async () => {
  const { kv, federation, task, ctx, ran, settled } = setUp();
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await ctx.enqueueTask(task, { key: "a", n: 1 });
    await ctx.enqueueTaskMany(task, [{ key: "a", n: 2 }], { delay: { milliseconds: 10 } });
    await settled(2);
    assertEquals(ran.length, 2);
    assertEquals(kv.flowReads, 0);
  } finally {
    controller.abort();
    await workers;
  }
});

test("debounce and throttle options are checked at the call, naming the option", async () => {
  const { ctx, task } = setUp();
  const data = { key: "a", n: 1 };
  // deno-lint-ignore no-explicit-any
  const refused = async (options: unknown, type: new (...args: any[]) => Error, text: string) => {
    const error = await assertRejects(
      () => ctx.enqueueTask(task, data, options as TaskEnqueueOptions),
      type,
    );
    assert(error.message.includes(text), error.message);
  };
  await refused({ debounce: { key: "p" } }, TypeError, "debounce.delay");
  await refused({ debounce: { key: "p", delay: { seconds: -1 } } }, RangeError, "debounce.delay");
  await refused({ debounce: { key: "", delay } }, TypeError, "debounce.key");
  await refused(
    { debounce: { key: "p", delay, maxWait: { seconds: 0 } } },
    RangeError,
    "debounce.maxWait",
  );
  await refused(
    { debounce: { key: "p", delay, wait: delay } },
    UnknownOptionError,
    "debounce.wait",
  );
  await refused({ debounce: "p" }, TypeError, "debounce option must be an object");
  await refused({ throttle: { key: "p" } }, TypeError, "throttle.period");
  await refused({ throttle: { key: 7, period: delay } }, TypeError, "throttle.key");
  await refused(
    { debounce: { key: "p", delay }, throttle: { key: "p", period: delay } },
    TypeError,
    "debounce and throttle options cannot be used together",
  );
  await refused({ debounce: { key: "p", delay }, delay }, TypeError, "with delay");
  await refused(
    { throttle: { key: "p", period: delay }, deduplicationKey: "k" },
    TypeError,
    "throttle option cannot be used with deduplicationKey",
  );
  // A key function in enqueueTask() is refused by the types and at the call.
  await refused({ debounce: { key: () => "", delay } }, TypeError, "debounce.key of payload 0");
});

test("a KvStore without cas() refuses debounce and throttle", async () => {
  const kv = new MemoryKvStore();
  const federation = createFederation<void>({
    kv: {
      get: kv.get.bind(kv),
      set: kv.set.bind(kv),
      delete: kv.delete.bind(kv),
      list: kv.list.bind(kv),
    },
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  const task = federation.defineTask("t", { schema: z.object({}), handler() {} });
  const ctx = federation.createContext(base, undefined);
  const error = await assertRejects(
    () => ctx.enqueueTask(task, {}, { throttle: { key: "k", period: delay } }),
    TypeError,
  );
  assert(error.message.includes("throttle option needs a KvStore with cas()"), error.message);
});

test("the types refuse debounce with throttle, delay or a wrong field", () => {
  const { ctx, task } = setUp();
  const data = { key: "a", n: 1 };
  const typeOnly = (_: () => unknown) => {};
  const both = { debounce: { key: "p", delay }, throttle: { key: "p", period: delay } };
  // @ts-expect-error: debounce and throttle at once.
  typeOnly(() => ctx.enqueueTask(task, data, both));
  // @ts-expect-error: debounce sets the delay itself.
  typeOnly(() => ctx.enqueueTask(task, data, { debounce: { key: "p", delay }, delay }));
  const deduplicated = { throttle: { key: "p", period: delay }, deduplicationKey: "k" };
  // @ts-expect-error: throttle replaces deduplication.
  typeOnly(() => ctx.enqueueTask(task, data, deduplicated));
  // @ts-expect-error: the key is a string.
  typeOnly(() => ctx.enqueueTask(task, data, { debounce: { key: 1, delay } }));
  // @ts-expect-error: enqueueTask() takes no key function.
  typeOnly(() => ctx.enqueueTask(task, data, { debounce: { key: () => "p", delay } }));
  // @ts-expect-error: throttle needs a period.
  typeOnly(() => ctx.enqueueTask(task, data, { throttle: { key: "p" } }));
  // The key function of enqueueTaskMany() gets the payload's type.
  typeOnly(() =>
    ctx.enqueueTaskMany(task, [data], {
      // @ts-expect-error: the payload has no "post" property.
      debounce: { key: (payload) => payload.post, delay },
    })
  );
  typeOnly(() =>
    ctx.enqueueTaskMany(task, [data], { throttle: { key: (p) => p.key, period: delay } })
  );
});
