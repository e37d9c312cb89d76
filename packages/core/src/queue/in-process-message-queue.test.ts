import {
  assert,
  assertEquals,
  assertFalse,
  assertInstanceOf,
  assertMatch,
  assertRejects,
  deferred,
  detectRuntime,
  test,
  within,
} from "@fedify/fixture";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { InProcessMessageQueue } from "./in-process-message-queue.ts";

/** Lets pending timers and microtasks run once. */
function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

test("InProcessMessageQueue hands a message to a waiting listener", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const received = deferred<unknown>();
  const listening = queue.listen((message) => received.resolve(message), {
    signal: controller.signal,
  });
  await queue.enqueue({ type: "test", n: 1 });
  assertEquals(await within(received.promise, "the message"), { type: "test", n: 1 });
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue delivers messages enqueued before listen()", async () => {
  await using queue = new InProcessMessageQueue();
  await queue.enqueue("early");
  const controller = new AbortController();
  const received = deferred<unknown>();
  const listening = queue.listen((message) => received.resolve(message), {
    signal: controller.signal,
  });
  assertEquals(await within(received.promise, "the message"), "early");
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue does not deliver a delayed message before its delay", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const received = deferred<number>();
  const listening = queue.listen(() => received.resolve(performance.now()), {
    signal: controller.signal,
  });
  const start = performance.now();
  await queue.enqueue("later", { delay: { milliseconds: 300 } });
  const deliveredAt = await within(received.promise, "the delayed message");
  assert(deliveredAt - start >= 300, `delivered after ${deliveredAt - start} ms`);
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue rejects a negative delay naming the delay option", async () => {
  await using queue = new InProcessMessageQueue();
  await assertRejects(
    () => queue.enqueue("x", { delay: { seconds: -1 } }),
    RangeError,
    "delay",
  );
  await assertRejects(
    () => queue.enqueueMany(["x"], { delay: { seconds: -1 } }),
    RangeError,
    "delay",
  );
  assertEquals(await queue.getDepth(), { queued: 0, ready: 0, delayed: 0 });
});

test("InProcessMessageQueue reports ready, delayed and in-flight messages in getDepth()", async () => {
  await using queue = new InProcessMessageQueue();
  assertEquals(await queue.getDepth(), { queued: 0, ready: 0, delayed: 0 });
  await queue.enqueueMany(["a", "b", "c"]);
  await queue.enqueue("d", { delay: { hours: 1 } });
  assertEquals(await queue.getDepth(), { queued: 4, ready: 3, delayed: 1 });

  const controller = new AbortController();
  const started = deferred();
  const release = deferred();
  const listening = queue.listen(async () => {
    started.resolve();
    await release.promise;
  }, { signal: controller.signal });
  await within(started.promise, "the first handler to start");
  // One message in flight still counts as queued, but no longer as ready.
  assertEquals(await queue.getDepth(), { queued: 4, ready: 2, delayed: 1 });
  controller.abort();
  release.resolve();
  await within(listening, "listen() to resolve");
  assertEquals(await queue.getDepth(), { queued: 3, ready: 2, delayed: 1 });
});

test("InProcessMessageQueue delivers enqueueMany() messages in order", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const received: number[] = [];
  const done = deferred();
  const listening = queue.listen((message: number) => {
    received.push(message);
    if (received.length === 10) done.resolve();
  }, { signal: controller.signal });
  await queue.enqueueMany([0, 1, 2, 3, 4]);
  await queue.enqueueMany([5, 6, 7, 8, 9], { delay: { milliseconds: 50 } });
  await within(done.promise, "ten messages");
  assertEquals(received, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue processes messages with one ordering key one at a time, in order", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const received: number[] = [];
  let running = 0;
  let maxRunning = 0;
  const done = deferred();
  const handler = async (message: number) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    // Yield so that competing listeners get a chance to pick a message.
    await nextMacrotask();
    received.push(message);
    running--;
    if (received.length === 20) done.resolve();
  };
  // Three listeners compete; the shared key must still serialise them.
  const listening = [1, 2, 3].map(() => queue.listen(handler, { signal: controller.signal }));
  const messages = Array.from({ length: 20 }, (_, i) => i);
  for (const message of messages) await queue.enqueue(message, { orderingKey: "actor-1" });
  await within(done.promise, "twenty messages");
  assertEquals(maxRunning, 1);
  assertEquals(received, messages);
  controller.abort();
  await within(Promise.all(listening), "listen() to resolve");
});

test("InProcessMessageQueue runs messages with different ordering keys on competing listeners", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const startedA = deferred();
  const startedB = deferred();
  const release = deferred();
  const listening = [1, 2].map(() =>
    queue.listen(async (message: string) => {
      if (message === "a") startedA.resolve();
      else startedB.resolve();
      await release.promise;
    }, { signal: controller.signal })
  );
  await queue.enqueue("a", { orderingKey: "a" });
  await queue.enqueue("b", { orderingKey: "b" });
  // Both handlers are running at the same time: neither key blocks the other.
  await within(Promise.all([startedA.promise, startedB.promise]), "both handlers");
  controller.abort();
  release.resolve();
  await within(Promise.all(listening), "listen() to resolve");
});

test("InProcessMessageQueue does not let a delayed keyed message block ready messages", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const received: string[] = [];
  const done = deferred();
  const listening = queue.listen((message: string) => {
    received.push(message);
    if (received.length === 2) done.resolve();
  }, { signal: controller.signal });
  await queue.enqueue("delayed-a", { orderingKey: "a", delay: { hours: 1 } });
  await queue.enqueue("ready-b", { orderingKey: "b" });
  // Documented: a later same-key message without a delay does not wait for
  // an earlier delayed one.
  await queue.enqueue("ready-a", { orderingKey: "a" });
  await within(done.promise, "the two ready messages");
  assertEquals(received, ["ready-b", "ready-a"]);
  assertEquals(await queue.getDepth(), { queued: 1, ready: 0, delayed: 1 });
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue listen() waits for the running handler after the signal aborts", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const started = deferred();
  const release = deferred();
  let handlerFinished = false;
  const listening = queue.listen(async () => {
    started.resolve();
    await release.promise;
    handlerFinished = true;
  }, { signal: controller.signal });
  let listenResolved = false;
  const observed = listening.then(() => {
    listenResolved = true;
    return handlerFinished;
  });
  await queue.enqueue("slow");
  await within(started.promise, "the handler to start");
  controller.abort();
  await nextMacrotask();
  assertFalse(listenResolved, "listen() resolved while the handler was still running");
  release.resolve();
  assert(await within(observed, "listen() to resolve"), "the handler had not finished");
});

test("InProcessMessageQueue listen() resolves at once when the signal is already aborted", async () => {
  await using queue = new InProcessMessageQueue();
  await queue.enqueue("never");
  let called = false;
  await within(
    queue.listen(() => {
      called = true;
    }, { signal: AbortSignal.abort() }),
    "listen() to resolve",
  );
  assertFalse(called);
  assertEquals(await queue.getDepth(), { queued: 1, ready: 1, delayed: 0 });
});

test("InProcessMessageQueue keeps listening after a handler throws", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const received: string[] = [];
  const done = deferred();
  const listening = queue.listen(async (message: string) => {
    received.push(message);
    if (message === "reject") {
      await nextMacrotask();
      throw new Error("rejected on purpose");
    }
    if (message === "throw") throw new Error("thrown on purpose");
    done.resolve();
  }, { signal: controller.signal });
  await queue.enqueueMany(["reject", "throw", "ok"]);
  await within(done.promise, "the message after the failures");
  assertEquals(received, ["reject", "throw", "ok"]);
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue gives each message to exactly one of several listeners", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const counts = new Map<number, number>();
  const done = deferred();
  const total = 60;
  let handled = 0;
  const listening = [1, 2, 3].map(() =>
    queue.listen(async (message: number) => {
      counts.set(message, (counts.get(message) ?? 0) + 1);
      await nextMacrotask();
      if (++handled === total) done.resolve();
    }, { signal: controller.signal })
  );
  for (let i = 0; i < total; i += 2) await queue.enqueueMany([i, i + 1]);
  await within(done.promise, "every message");
  controller.abort();
  await within(Promise.all(listening), "listen() to resolve");
  assertEquals(counts.size, total);
  assert([...counts.values()].every((count) => count === 1), "a message was delivered twice");
  assertEquals(await queue.getDepth(), { queued: 0, ready: 0, delayed: 0 });
});

test("InProcessMessageQueue lets timers run while it works through many ready messages", async () => {
  await using queue = new InProcessMessageQueue();
  const total = 1_000;
  await queue.enqueueMany(Array.from({ length: total }, (_, i) => i));
  const controller = new AbortController();
  let handled = 0;
  const done = deferred();
  let handledWhenTimerFired = -1;
  setTimeout(() => handledWhenTimerFired = handled, 0);
  const listening = queue.listen(() => {
    if (++handled === total) done.resolve();
  }, { signal: controller.signal });
  await within(done.promise, "every message");
  controller.abort();
  await within(listening, "listen() to resolve");
  assert(
    handledWhenTimerFired >= 0 && handledWhenTimerFired < total,
    `the timer fired after ${handledWhenTimerFired} of ${total} messages`,
  );
});

test("InProcessMessageQueue copies messages when they are enqueued", async () => {
  await using queue = new InProcessMessageQueue();
  const message = { items: ["a"] };
  await queue.enqueue(message);
  message.items.push("b");
  const controller = new AbortController();
  const received = deferred<unknown>();
  const listening = queue.listen((m) => received.resolve(m), { signal: controller.signal });
  assertEquals(await within(received.promise, "the message"), { items: ["a"] });
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue does not retry natively", async () => {
  await using queue = new InProcessMessageQueue({});
  assertFalse(queue.nativeRetrial);
  assertInstanceOf(queue[Symbol.asyncDispose](), Promise);
});

/** Runs testdata/delayed-message-process.ts on the current runtime. */
async function runDelayedMessageProcess(mode: "idle" | "listening"): Promise<string> {
  const script = fileURLToPath(new URL("./testdata/delayed-message-process.ts", import.meta.url));
  const args = detectRuntime() === "deno" ? ["run", "--allow-all", script, mode] : [script, mode];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => output += chunk);
  child.stderr.on("data", (chunk) => output += chunk);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  try {
    const code = await within(exited, `the ${mode} child process to exit`, 120_000);
    assertEquals(code, 0, output);
  } finally {
    child.kill();
  }
  return output;
}

test("InProcessMessageQueue lets the process exit with delayed messages and no listener", async () => {
  const output = await runDelayedMessageProcess("idle");
  assertMatch(output, /enqueued/);
});

test("InProcessMessageQueue keeps the process alive while a listener waits for a delayed message", async () => {
  const output = await runDelayedMessageProcess("listening");
  assertMatch(output, /handled later/);
});

test("InProcessMessageQueue counts hand-outs until a redelivery in place resets the count", async () => {
  await using queue = new InProcessMessageQueue({ redeliveryDelay: { milliseconds: 0 } });
  const controller = new AbortController();
  const counts: (number | undefined)[] = [];
  const done = deferred();
  const listening = queue.listen(async (message: string, redelivery) => {
    counts.push(redelivery?.deliveryCount);
    if (message === "v1" && counts.length < 3) throw new Error("thrown on purpose");
    if (message === "v1") {
      await redelivery!.redeliver("v2", { delay: { milliseconds: 0 } });
      return;
    }
    done.resolve();
  }, { signal: controller.signal });
  await queue.enqueue("v1");
  await within(done.promise, "the redelivered version");
  // Thrown twice (1, 2), redelivered in place on the third (3), and the new
  // version starts counting again.
  assertEquals(counts, [1, 2, 3, 1]);
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("InProcessMessageQueue checks listen()'s batchSize, and hands out messages one at a time with one", async () => {
  await using queue = new InProcessMessageQueue();
  await assertRejects(
    () => queue.listen(() => {}, { batchSize: 0 }),
    RangeError,
    "The batchSize option must be a positive integer; got 0.",
  );
  const controller = new AbortController();
  const seen: number[] = [];
  const all = deferred();
  const listening = queue.listen((n: number) => {
    seen.push(n);
    if (seen.length === 3) all.resolve();
  }, { signal: controller.signal, batchSize: 50 });
  await queue.enqueueMany([1, 2, 3]);
  await within(all.promise, "three messages");
  controller.abort();
  await listening;
  assertEquals(seen, [1, 2, 3]);
});

test("InProcessMessageQueue starts the next message beside a handler that gave its slot up, until it takes it back", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  const started: string[] = [];
  const releases = new Map<string, ReturnType<typeof deferred<void>>>();
  const takeBacks = new Map<string, () => void>();
  let running = 0;
  let most = 0;
  const listening = queue.listen(async (name: string, redelivery) => {
    started.push(name);
    most = Math.max(most, ++running);
    const release = deferred<void>();
    releases.set(name, release);
    // "a" and "b" wait with their slots given up; "c" holds its slot.
    if (name !== "c") takeBacks.set(name, redelivery!.yieldSlot!());
    await release.promise;
    running--;
  }, { signal: controller.signal });
  await queue.enqueueMany(["a", "b", "c", "d"]);
  const startedAll = (count: number) => async () => {
    while (started.length < count) await nextMacrotask();
  };
  await within(startedAll(3)(), "a, b and c to start");
  // c holds the one slot: d waits.
  for (let i = 0; i < 5; i++) await nextMacrotask();
  assertEquals(started, ["a", "b", "c"]);
  // a takes its slot back: c still holds one, so d still waits.
  takeBacks.get("a")!();
  releases.get("c")!.resolve();
  for (let i = 0; i < 5; i++) await nextMacrotask();
  // c's slot was b's lane: d starts there once c is done.
  await within(startedAll(4)(), "d to start after c");
  assertEquals(started, ["a", "b", "c", "d"]);
  let resolved = false;
  const stopped = listening.then(() => resolved = true);
  controller.abort();
  for (const name of ["a", "b"]) releases.get(name)!.resolve();
  await nextMacrotask();
  assertFalse(resolved, "listen() resolved while d was still running");
  releases.get("d")!.resolve();
  await within(stopped, "listen() to resolve");
  assertEquals([running, most], [0, 3]);
});

test("InProcessMessageQueue closes a yielded slot's lane when its handler settles", async () => {
  await using queue = new InProcessMessageQueue();
  const controller = new AbortController();
  let running = 0;
  let most = 0;
  const first = deferred<void>();
  const all = deferred<void>();
  let done = 0;
  const listening = queue.listen(async (n: number, redelivery) => {
    most = Math.max(most, ++running);
    if (n === 0) {
      redelivery!.yieldSlot!();
      await first.promise;
    } else {
      await nextMacrotask();
    }
    running--;
    if (++done === 6) all.resolve();
  }, { signal: controller.signal });
  await queue.enqueue(0);
  await nextMacrotask();
  // 0 settles without taking its slot back: the lane it opened closes.
  first.resolve();
  await nextMacrotask();
  await queue.enqueueMany([1, 2, 3, 4, 5]);
  await within(all.promise, "six messages");
  controller.abort();
  await listening;
  // One at a time again once 0 has settled.
  assertEquals(most, 1);
});
