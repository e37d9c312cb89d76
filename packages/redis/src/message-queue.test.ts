import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  deferred,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import { Redis } from "ioredis";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";
import { type MessageRedelivery, QueueClosedError } from "@fedwork/core";
import { RedisLeaseLostError, RedisMessageQueueClosedError } from "./errors.ts";
import { RedisMessageQueue } from "./message-queue.ts";

function uniqueName(): string {
  return `fedwork-test-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** Runs `body` with a fresh queue name and deletes its keys afterwards. */
async function withQueueName(body: (queue: string) => Promise<void>): Promise<void> {
  const queue = uniqueName();
  try {
    await body(queue);
  } finally {
    await deleteKeys(`{fedwork:${queue}}`);
  }
}

test("RedisMessageQueue validates its options, naming the option", () => {
  const url = REDIS_URL;
  assertThrows(() => new RedisMessageQueue({}), TypeError, "exactly one of the client");
  assertThrows(
    () => new RedisMessageQueue({ url, createClient: () => new Redis(url) }),
    TypeError,
    "exactly one",
  );
  assertThrows(
    () => new RedisMessageQueue({ url, leaseTime: { seconds: 0 } }),
    RangeError,
    "leaseTime option must be a positive duration",
  );
  assertThrows(
    () => new RedisMessageQueue({ url, leaseTime: { seconds: -1 } }),
    RangeError,
    "leaseTime",
  );
  assertThrows(
    () =>
      new RedisMessageQueue({ url, leaseTime: { seconds: 3 }, heartbeatInterval: { seconds: 3 } }),
    RangeError,
    "heartbeatInterval",
  );
  assertThrows(() => new RedisMessageQueue({ url, concurrency: 0 }), RangeError, "concurrency");
  assertThrows(() => new RedisMessageQueue({ url, concurrency: 1.5 }), RangeError, "concurrency");
  assertThrows(() => new RedisMessageQueue({ url, queue: "" }), TypeError, "queue");
  assertThrows(() => new RedisMessageQueue({ url, prefix: "a{b}" }), RangeError, "prefix");
  assertThrows(
    () => new RedisMessageQueue({ url, pollInterval: { seconds: 0 } }),
    RangeError,
    "pollInterval",
  );
  assertThrows(
    () => new RedisMessageQueue({ url, prefetch: -1 }),
    RangeError,
    "prefetch option must be a non-negative integer",
  );
  assertThrows(() => new RedisMessageQueue({ url, prefetch: 0.5 }), RangeError, "prefetch");
  assertThrows(
    () => new RedisMessageQueue({ url, prefetch: 32, maxPrefetch: 8 }),
    RangeError,
    "The maxPrefetch option (8) must be at least the prefetch option (32)",
  );
  assertThrows(
    () => new RedisMessageQueue({ url, redeliveryDelay: { seconds: 0 } }),
    RangeError,
    "redeliveryDelay option must be a positive duration",
  );
});

test("RedisMessageQueue keeps every key of a queue under one hash tag", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({ url: REDIS_URL, queue: name });
    await queue.enqueue({ n: 1 }, { orderingKey: "actor" });
    await queue.enqueue({ n: 2 }, { delay: { hours: 1 } });
    await using redis = disposable(new Redis(REDIS_URL));
    const keys = await redis.keys(`{fedwork:${name}}*`);
    assert(keys.length >= 5, `only ${keys.length} keys: ${keys}`);
    assert(keys.every((key) => key.startsWith(`{fedwork:${name}}:`)), `keys: ${keys}`);
    assertEquals(
      keys.filter((key) => key.includes(":pending:")),
      [`{fedwork:${name}}:pending:actor`],
    );
  });
});

test("RedisMessageQueue rejects enqueue on a client that was closed", async () => {
  await withQueueName(async (name) => {
    const client = new Redis(REDIS_URL);
    await client.quit();
    await using queue = new RedisMessageQueue({ client, queue: name });
    await assertRejects(() => queue.enqueue({ lost: false }), Error);
  });
});

test("RedisMessageQueue rejects enqueue after it was disposed", async () => {
  await withQueueName(async (name) => {
    const queue = new RedisMessageQueue({ url: REDIS_URL, queue: name });
    await queue.enqueue("first");
    await queue[Symbol.asyncDispose]();
    const error = await assertRejects(() => queue.enqueue("second"), RedisMessageQueueClosedError);
    // Recognised like every other backend's closed error.
    assertInstanceOf(error, QueueClosedError);
  });
});

test("RedisMessageQueue leaves a client passed in open when disposed", async () => {
  await withQueueName(async (name) => {
    await using client = disposable(new Redis(REDIS_URL));
    const queue = new RedisMessageQueue({ client, queue: name });
    const controller = new AbortController();
    const received = deferred<unknown>();
    const listening = queue.listen((message) => received.resolve(message), {
      signal: controller.signal,
    });
    await queue.enqueue("hello");
    assertEquals(await within(received.promise, "the message"), "hello");
    controller.abort();
    await within(listening, "listen() to resolve");
    await queue[Symbol.asyncDispose]();
    assertEquals(await client.ping(), "PONG");
  });
});

test("RedisMessageQueue keeps listening after its connections are killed", async () => {
  await withQueueName(async (name) => {
    const connectionName = `${name}-conn`;
    await using queue = new RedisMessageQueue({
      createClient: () => new Redis(REDIS_URL, { connectionName }),
      queue: name,
    });
    const controller = new AbortController();
    const received: string[] = [];
    const waiters = new Map<string, () => void>();
    const listening = queue.listen((message: string) => {
      received.push(message);
      waiters.get(message)?.();
    }, { signal: controller.signal });
    const arrival = (message: string) => new Promise<void>((r) => waiters.set(message, r));
    const before = arrival("before");
    await queue.enqueue("before");
    await within(before, "the message before the kill");
    await using admin = disposable(new Redis(REDIS_URL));
    const killed = await killConnections(admin, connectionName);
    assert(killed >= 2, `killed ${killed} connections; expected the command and wake-up ones`);
    const after = arrival("after");
    await queue.enqueue("after");
    await within(after, "the message enqueued after the kill");
    assertEquals(received, ["before", "after"]);
    controller.abort();
    await within(listening, "listen() to resolve");
  });
});

test("RedisMessageQueue runs up to `concurrency` handlers at once", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({
      url: REDIS_URL,
      queue: name,
      concurrency: 3,
      prefetch: 0,
    });
    const controller = new AbortController();
    let running = 0;
    let maxRunning = 0;
    const allStarted = deferred();
    const release = deferred();
    let started = 0;
    const listening = queue.listen(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      if (++started === 3) allStarted.resolve();
      await release.promise;
      running--;
    }, { signal: controller.signal });
    await queue.enqueueMany([1, 2, 3, 4, 5]);
    await within(allStarted.promise, "three handlers to run at once");
    assertEquals(await queue.getDepth(), { queued: 5, ready: 2, delayed: 0 });
    controller.abort();
    release.resolve();
    await within(listening, "listen() to resolve");
    assertEquals(maxRunning, 3);
  });
});

test("RedisMessageQueue holds up to `prefetch` messages beyond `concurrency`, leased", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({
      url: REDIS_URL,
      queue: name,
      concurrency: 2,
      prefetch: 3,
    });
    const controller = new AbortController();
    const release = deferred();
    let started = 0;
    const twoStarted = deferred();
    const listening = queue.listen(async () => {
      if (++started === 2) twoStarted.resolve();
      await release.promise;
    }, { signal: controller.signal });
    await queue.enqueueMany([1, 2, 3, 4, 5, 6, 7]);
    await within(twoStarted.promise, "two handlers to run");
    // Two running and three prefetched are in flight; two wait in Redis.
    await waitUntil(async () => (await queue.getDepth()).ready === 2, {
      what: "five messages to be in flight",
    });
    assertEquals(started, 2);
    controller.abort();
    release.resolve();
    await within(listening, "listen() to resolve");
  });
});

test("RedisMessageQueue renews the leases of prefetched messages", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({
      url: REDIS_URL,
      queue: name,
      prefetch: 2,
      leaseTime: { seconds: 30 },
      heartbeatInterval: { milliseconds: 50 },
    });
    await using admin = disposable(new Redis(REDIS_URL));
    const controller = new AbortController();
    const release = deferred();
    const started = deferred();
    const listening = queue.listen(async () => {
      started.resolve();
      await release.promise;
    }, { signal: controller.signal });
    await queue.enqueueMany(["running", "prefetched 1", "prefetched 2"]);
    await within(started.promise, "the first handler");
    const inflight = `{fedwork:${name}}:inflight`;
    await waitUntil(async () => await admin.zcard(inflight) === 3, {
      what: "three messages in flight",
    });
    const before = await admin.zrange(inflight, "0", "-1", "WITHSCORES");
    await waitUntil(async () => {
      const after = await admin.zrange(inflight, "0", "-1", "WITHSCORES");
      // Every deadline moved on (ids keep their order: one score for all).
      return after.length === 6 &&
        [1, 3, 5].every((i) => Number(after[i]) > Number(before[i]));
    }, { what: "every lease, prefetched ones too, to be renewed" });
    controller.abort();
    release.resolve();
    await within(listening, "listen() to resolve");
  });
});

test("RedisMessageQueue keeps same-key messages in order with prefetch", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({
      url: REDIS_URL,
      queue: name,
      concurrency: 3,
      prefetch: 8,
    });
    const controller = new AbortController();
    const received: Record<string, number[]> = { a: [], b: [] };
    let handled = 0;
    const allHandled = deferred();
    const listening = queue.listen(async (message: { key: string; n: number }) => {
      received[message.key].push(message.n);
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (++handled === 40) allHandled.resolve();
    }, { signal: controller.signal });
    for (let n = 0; n < 20; n++) {
      await queue.enqueue({ key: "a", n }, { orderingKey: "a" });
      await queue.enqueue({ key: "b", n }, { orderingKey: "b" });
    }
    await within(allHandled.promise, "every message");
    const inOrder = Array.from({ length: 20 }, (_, n) => n);
    assertEquals(received, { a: inOrder, b: inOrder });
    controller.abort();
    await within(listening, "listen() to resolve");
  });
});

test("RedisMessageQueue never runs two same-key messages at once, even with concurrency", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({ url: REDIS_URL, queue: name, concurrency: 4 });
    const controller = new AbortController();
    const runningKeys = new Set<string>();
    let overlapped = false;
    const order: Record<string, number[]> = { a: [], b: [] };
    const done = deferred();
    let handled = 0;
    const listening = queue.listen(async (message: { key: string; n: number }) => {
      if (runningKeys.has(message.key)) overlapped = true;
      runningKeys.add(message.key);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order[message.key].push(message.n);
      runningKeys.delete(message.key);
      if (++handled === 20) done.resolve();
    }, { signal: controller.signal });
    for (let n = 0; n < 10; n++) {
      await queue.enqueue({ key: "a", n }, { orderingKey: "a" });
      await queue.enqueue({ key: "b", n }, { orderingKey: "b" });
    }
    await within(done.promise, "twenty messages");
    controller.abort();
    await within(listening, "listen() to resolve");
    assert(!overlapped, "two messages with one ordering key ran at once");
    const expected = Array.from({ length: 10 }, (_, n) => n);
    assertEquals(order, { a: expected, b: expected });
  });
});

test("RedisMessageQueue extends the lease of a handler running longer than the lease", async () => {
  await withQueueName(async (name) => {
    const options = { url: REDIS_URL, queue: name, leaseTime: { milliseconds: 600 } };
    await using first = new RedisMessageQueue(options);
    await using second = new RedisMessageQueue(options);
    const controller = new AbortController();
    const started = deferred();
    const finished = deferred();
    const deliveries: string[] = [];
    const listeningFirst = first.listen(async () => {
      deliveries.push("first");
      started.resolve();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      finished.resolve();
    }, { signal: controller.signal });
    await first.enqueue("long");
    await within(started.promise, "the first handler");
    const listeningSecond = second.listen(() => {
      deliveries.push("second");
    }, { signal: controller.signal });
    // Still in flight (not ready) for as long as the handler runs.
    assertEquals(await first.getDepth(), { queued: 1, ready: 0, delayed: 0 });
    await within(finished.promise, "the long handler");
    controller.abort();
    await within(Promise.all([listeningFirst, listeningSecond]), "listen() to resolve");
    assertEquals(deliveries, ["first"]);
    assertEquals(await first.getDepth(), { queued: 0, ready: 0, delayed: 0 });
  });
});

test("RedisMessageQueue hands out a delayed keyed message after the earlier same-key ones", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({ url: REDIS_URL, queue: name, concurrency: 2 });
    await queue.enqueue("delayed", { orderingKey: "k", delay: { milliseconds: 300 } });
    await queue.enqueueMany(["ready-1", "ready-2"], { orderingKey: "k" });
    // Listening only now: however slow the machine, the delayed message
    // becomes ready (joins its key's line) after the two others.
    const controller = new AbortController();
    const order: string[] = [];
    const done = deferred();
    const listening = queue.listen((message: string) => {
      order.push(message);
      if (order.length === 3) done.resolve();
    }, { signal: controller.signal });
    await within(done.promise, "three messages");
    controller.abort();
    await within(listening, "listen() to resolve");
    assertEquals(order, ["ready-1", "ready-2", "delayed"]);
  });
});

test("RedisMessageQueue hands a dead worker's keyed message to another worker, then the next", async () => {
  await withQueueName(async (name) => {
    const options = { url: REDIS_URL, queue: name, leaseTime: { milliseconds: 500 } };
    const dead = new RedisMessageQueue(options);
    await using live = new RedisMessageQueue(options);
    const started = deferred();
    const deadListening = dead.listen(async () => {
      started.resolve();
      await new Promise<never>(() => {});
    });
    const deadOutcome = deadListening.then(() => "resolved", (error: unknown) => error);
    await dead.enqueueMany([1, 2], { orderingKey: "k" });
    await within(started.promise, "the handler that never finishes");
    // The worker stops heartbeating without acknowledging: its lease runs out.
    await dead[Symbol.asyncDispose]();
    const outcome = await within(deadOutcome, "the disposed listener to stop");
    assert(outcome instanceof RedisMessageQueueClosedError, `listen() ended with ${outcome}`);
    const controller = new AbortController();
    const order: number[] = [];
    const done = deferred();
    const listening = live.listen((message: number) => {
      order.push(message);
      if (order.length === 2) done.resolve();
    }, { signal: controller.signal });
    await within(done.promise, "both messages on the live worker");
    controller.abort();
    await within(listening, "listen() to resolve");
    assertEquals(order, [1, 2]);
  });
});

test("RedisMessageQueue hands a thrown keyed message out again before the next one of its key", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({
      url: REDIS_URL,
      queue: name,
      concurrency: 2,
      redeliveryDelay: { milliseconds: 200 },
    });
    const controller = new AbortController();
    const order: string[] = [];
    const done = deferred();
    const listening = queue.listen((message: string) => {
      order.push(message);
      if (message === "first" && order.length === 1) throw new Error("Failing on purpose.");
      if (message === "second") done.resolve();
    }, { signal: controller.signal });
    await queue.enqueueMany(["first", "second"], { orderingKey: "k" });
    await within(done.promise, "the second message");
    controller.abort();
    await within(listening, "listen() to resolve");
    assertEquals(order, ["first", "first", "second"]);
    assertEquals(await queue.getDepth(), { queued: 0, ready: 0, delayed: 0 });
  });
});

test("RedisMessageQueue redeliver() leaves alone a message whose lease went to another worker", async () => {
  await withQueueName(async (name) => {
    // No heartbeat comes while the test runs, so only the test ends leases.
    const options = {
      url: REDIS_URL,
      queue: name,
      leaseTime: { hours: 1 },
      heartbeatInterval: { minutes: 59 },
    };
    await using first = new RedisMessageQueue(options);
    await using second = new RedisMessageQueue(options);
    await using admin = disposable(new Redis(REDIS_URL));
    const controller = new AbortController();
    const firstStarted = deferred();
    const takenOver = deferred<string>();
    const firstOutcome = deferred<unknown>();
    const secondDone = deferred();
    const listeningFirst = first.listen(async (_message, redelivery?: MessageRedelivery) => {
      firstStarted.resolve();
      await takenOver.promise;
      try {
        await redelivery?.redeliver("overwritten", { delay: { milliseconds: 0 } });
        firstOutcome.resolve("stored");
      } catch (error) {
        firstOutcome.resolve(error);
        throw error;
      }
    }, { signal: controller.signal });
    await first.enqueue("original");
    await within(firstStarted.promise, "the first worker's handler");
    // The first worker's lease runs out, as if its heartbeats had failed.
    const inflight = `{fedwork:${name}}:inflight`;
    const [id] = await admin.zrange(inflight, "0", "-1");
    await admin.zadd(inflight, "XX", 0, id);
    const listeningSecond = second.listen(async (message: string) => {
      takenOver.resolve(message);
      await firstOutcome.promise;
      secondDone.resolve();
    }, { signal: controller.signal });
    assertEquals(await within(takenOver.promise, "the second worker to take over"), "original");
    assertInstanceOf(
      await within(firstOutcome.promise, "the first redeliver()"),
      RedisLeaseLostError,
    );
    await within(secondDone.promise, "the second worker's handler");
    controller.abort();
    await within(Promise.all([listeningFirst, listeningSecond]), "listen() to resolve");
    assertEquals(await first.getDepth(), { queued: 0, ready: 0, delayed: 0 });
  });
});

/** Kills every connection named `connectionName`; returns how many. */
async function killConnections(admin: Redis, connectionName: string): Promise<number> {
  const list = await admin.client("LIST") as string;
  const ids = list.split("\n")
    .filter((line) => line.includes(` name=${connectionName} `))
    .map((line) => /\bid=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
  for (const id of ids) await admin.client("KILL", "ID", id);
  return ids.length;
}

/** Makes an ioredis client usable with `await using`. */
function disposable(redis: Redis): Redis & AsyncDisposable {
  return Object.assign(redis, {
    [Symbol.asyncDispose]: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  });
}

test("RedisMessageQueue counts hand-outs in deliveryCount until redeliver() resets the count", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({
      url: REDIS_URL,
      queue: name,
      redeliveryDelay: { milliseconds: 50 },
    });
    const controller = new AbortController();
    const counts: (number | undefined)[] = [];
    const done = deferred();
    const listening = queue.listen(async (message: string, redelivery?: MessageRedelivery) => {
      counts.push(redelivery?.deliveryCount);
      if (message === "v1" && counts.length < 3) throw new Error("Failing on purpose.");
      if (message === "v1") {
        await redelivery!.redeliver("v2", { delay: { milliseconds: 0 } });
        return;
      }
      done.resolve();
    }, { signal: controller.signal });
    await queue.enqueue("v1", { orderingKey: "k" });
    await within(done.promise, "the redelivered version");
    controller.abort();
    await within(listening, "listen() to resolve");
    // Thrown twice (1, 2: a failure is no outcome), redelivered on the
    // third (3), and the new version counts from 1 again.
    assertEquals(counts, [1, 2, 3, 1]);
  });
});

test("RedisMessageQueue keeps the delivery count of a message whose worker died", async () => {
  await withQueueName(async (name) => {
    const options = { url: REDIS_URL, queue: name, leaseTime: { milliseconds: 500 } };
    const dead = new RedisMessageQueue(options);
    await using live = new RedisMessageQueue(options);
    const started = deferred<number | undefined>();
    const deadListening = dead.listen(async (_: unknown, redelivery?: MessageRedelivery) => {
      started.resolve(redelivery?.deliveryCount);
      await new Promise<never>(() => {});
    }).catch(() => {});
    await dead.enqueue("poison");
    assertEquals(await within(started.promise, "the handler that never finishes"), 1);
    // Killed mid-handler: no outcome, the lease runs out.
    await dead[Symbol.asyncDispose]();
    await within(deadListening, "the disposed listener to stop");
    const controller = new AbortController();
    const seen = deferred<number | undefined>();
    const listening = live.listen((_: unknown, redelivery?: MessageRedelivery) => {
      seen.resolve(redelivery?.deliveryCount);
    }, { signal: controller.signal });
    assertEquals(await within(seen.promise, "the message on the live worker"), 2);
    controller.abort();
    await within(listening, "listen() to resolve");
  });
});

test("RedisMessageQueue does not count prefetched messages released when a listener stops", async () => {
  await withQueueName(async (name) => {
    const options = { url: REDIS_URL, queue: name, concurrency: 1, prefetch: 2 };
    await using queue = new RedisMessageQueue(options);
    await queue.enqueueMany(["a", "b", "c"]);
    const first = new AbortController();
    const started = deferred();
    const gate = deferred();
    const firstListening = queue.listen(async () => {
      started.resolve();
      await gate.promise;
    }, { signal: first.signal });
    await within(started.promise, "the first handler");
    // One claim took all three: "b" and "c" wait prefetched.
    await waitUntil(async () => (await queue.getDepth()).ready === 0, {
      what: "the prefetch claim",
    });
    first.abort();
    gate.resolve();
    await within(firstListening, "the first listener to stop");
    const second = new AbortController();
    const counts: [string, number | undefined][] = [];
    const done = deferred();
    const listening = queue.listen((message: string, redelivery?: MessageRedelivery) => {
      counts.push([message, redelivery?.deliveryCount]);
      if (counts.length === 2) done.resolve();
    }, { signal: second.signal });
    await within(done.promise, "the released messages");
    second.abort();
    await within(listening, "listen() to resolve");
    assertEquals(counts, [["b", 1], ["c", 1]]);
  });
});

test("RedisMessageQueue counts a message stored before delivery counts existed from 1", async () => {
  await withQueueName(async (name) => {
    await using queue = new RedisMessageQueue({ url: REDIS_URL, queue: name });
    await queue.enqueue("old");
    // An earlier version handed it out 7 times, with redeliveries (outcomes)
    // in between, and kept no count of its own.
    const redis = new Redis(REDIS_URL);
    try {
      const ids = await redis.hkeys(`{fedwork:${name}}:msg`);
      await redis.hset(`{fedwork:${name}}:delivery`, ids[0], 7);
    } finally {
      redis.disconnect();
    }
    const controller = new AbortController();
    const seen = deferred<number | undefined>();
    const listening = queue.listen((_: unknown, redelivery?: MessageRedelivery) => {
      seen.resolve(redelivery?.deliveryCount);
    }, { signal: controller.signal });
    assertEquals(await within(seen.promise, "the old message"), 1);
    controller.abort();
    await within(listening, "listen() to resolve");
  });
});
