import { assert, assertEquals, assertInstanceOf, fail, test } from "./test-runner.ts";
import type { MessageQueueDepth, MessageRedelivery } from "@fedwork/core";
import { QueueClosedError } from "@fedwork/core/queue-kit";
import { runCrashTest } from "./crash-test.ts";
import { runPoisonTest } from "./poison-test.ts";
import { runStaleAcknowledgementTest } from "./stale-ack-test.ts";
import { defineDeduplicationTests } from "./deduplication-suite.ts";
import { definePriorityTests } from "./priority-suite.ts";
import { EVENT_TIMEOUT_MS, runQueueTest } from "./queue-harness.ts";
import type { MessageQueueConformanceOptions } from "./types.ts";
import { deferred, delay, waitUntil, within } from "./wait.ts";

const DEFAULT_LEASE_MS = 1500;

/**
 * Registers the message-queue conformance tests with the runtime's own
 * test runner (`Deno.test`, `node:test` or `bun:test`).
 *
 * Every test uses a fresh namespace, disposes every instance it created
 * with `Symbol.asyncDispose` and calls the factory's `cleanup()` at its end.
 * The tests:
 *
 * - an enqueued object reaches the listener as a deep-equal copy;
 * - `enqueueMany()` (when present) delivers every message, in order;
 * - a delayed message is not handled before its delay, and does not hold
 *   back a message enqueued after it;
 * - messages sharing an ordering key never overlap and run in order, even
 *   with two instances listening;
 * - `getDepth()` (when present) counts queued messages, and ready and
 *   delayed ones when it reports them;
 * - aborting the signal makes `listen()` wait for the running handler;
 * - two competing instances handle each of 20 messages exactly once;
 * - a handler that throws does not stop the listener, and its message is
 *   handed out again (durable queues: after the lease);
 * - when the queue passes a `MessageRedelivery` to its handlers (required
 *   with `redelivery: true`), `redeliver()` hands the new version out after
 *   its delay, rejects a negative delay and a second call, and a
 *   redelivered message keeps its ordering key held: the
 *   later message with that key waits until it has been handled;
 * - when the queue deduplicates natively (required with
 *   `deduplication: true`), `enqueueDeduplicated()` adds one message while
 *   its key is held, frees the key once the message is acknowledged or its
 *   TTL ran out, keeps it held across a redelivery in place, and (durable
 *   only) adds one message for concurrent calls from two processes;
 * - a queue without `nativePriority` refuses a priority other than 0; one
 *   with it (required with `priority: true`) starts 10 high-priority
 *   messages enqueued after 1,000 low ones before the remaining low ones,
 *   keeps a key's messages in order whatever their priorities and refuses
 *   a priority outside -5 to 5;
 * - when the queue claims ahead (`prefetch: true`), messages prefetched
 *   beyond the running handler stay leased while it listens and are handed
 *   back, in order, as soon as it stops, before the running handler ends;
 * - (durable only) `enqueue()` on a disposed instance rejects with a
 *   `QueueClosedError` (from `@fedwork/core/queue-kit`);
 * - (durable only) a handler running longer than the lease is not handed
 *   to a second live worker;
 * - (durable only) a message whose worker process was killed mid-handler is
 *   delivered again to a new instance;
 * - (with `leases: true`) a worker whose lease ran out (its process frozen) and
 *   whose message another worker has since been handed cannot acknowledge
 *   it: the message stays queued and, when the other worker fails, is
 *   handed out again;
 * - (with `deliveryCount: true`, since 0.4.0) a handler that throws is
 *   handed its message again with `deliveryCount` one higher, and a
 *   redelivery in place starts the count again at 1; (durable only) a
 *   message whose handler kills its worker process is handed to new child
 *   processes with the count climbing 1, 2, 3 until a child, seeing it over
 *   the limit, acknowledges it unrun, and the message behind it (same
 *   ordering key) then runs.
 *
 * @example
 * ```ts ignore
 * import { testMessageQueue } from "@fedwork/testing";
 *
 * testMessageQueue({
 *   name: "RedisMessageQueue",
 *   factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
 *   durable: true,
 * });
 * ```
 * @param options The backend's name, factory module and durability.
 * @since 0.1.0
 */
export function testMessageQueue(options: MessageQueueConformanceOptions): void {
  const { name, factoryModule, durable } = options;
  const redelivery = options.redelivery ?? false;
  const deduplication = options.deduplication ?? false;
  const prefetch = options.prefetch ?? false;
  const priority = options.priority ?? false;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const define = (
    behaviour: string,
    body: Parameters<typeof runQueueTest>[2],
  ) => test(`${name}: ${behaviour}`, () => runQueueTest(factoryModule, leaseMs, body));

  define("a listener receives a deep-equal copy of an enqueued message", async (run) => {
    const queue = await run.createQueue();
    const received = deferred<unknown>();
    run.listen(queue, (message) => received.resolve(message));
    const message = {
      type: "conformance",
      text: "héllo, 世界",
      count: 42,
      ratio: -1.5,
      flag: true,
      nothing: null,
      list: [1, "two", { three: 3 }],
      nested: { record: { a: "b" } },
    };
    await queue.enqueue(message);
    const actual = await within(received.promise, "the message", EVENT_TIMEOUT_MS);
    assertEquals(actual, message);
  });

  define("enqueueMany delivers every message in order to a single listener", async (run) => {
    const queue = await run.createQueue();
    if (queue.enqueueMany == null) return; // Optional method; nothing to check.
    const count = 10;
    await queue.enqueueMany(Array.from({ length: count }, (_, index) => ({ index })));
    const order: number[] = [];
    const all = deferred();
    run.listen(queue, (message: { index: number }) => {
      order.push(message.index);
      if (order.length >= count) all.resolve();
    });
    await within(all.promise, () => `${count} messages; got ${order}`, EVENT_TIMEOUT_MS);
    assertEquals(order, Array.from({ length: count }, (_, index) => index));
  });

  define("a delayed message waits for its delay and does not hold back others", async (run) => {
    const queue = await run.createQueue();
    const started: Record<string, number> = {};
    const order: string[] = [];
    const both = deferred();
    run.listen(queue, (message: { kind: string }) => {
      started[message.kind] = Date.now();
      order.push(message.kind);
      if (order.length >= 2) both.resolve();
    });
    const enqueuedAt = Date.now();
    await queue.enqueue({ kind: "delayed" }, { delay: { seconds: 2 } });
    await queue.enqueue({ kind: "immediate" });
    await within(both.promise, () => `both messages; got ${order}`, EVENT_TIMEOUT_MS);
    const delayedAfter = started.delayed - enqueuedAt;
    assert(
      delayedAfter >= 1900,
      `The message delayed by 2 s was handled after only ${delayedAfter} ms.`,
    );
    // Only conclusive when the immediate message was picked up before the
    // delay ran out; on a machine so slow that it was not, the order says
    // nothing about the queue.
    if (started.immediate - enqueuedAt < 1900) {
      assertEquals(order, ["immediate", "delayed"]);
    }
  });

  define("messages sharing an ordering key never overlap and run in order", async (run) => {
    const first = await run.createQueue();
    const second = await run.createQueue();
    const count = 6;
    let running = 0;
    let maxRunning = 0;
    const order: number[] = [];
    const all = deferred();
    const handler = async (message: { index: number }) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      order.push(message.index);
      await delay(30);
      running--;
      if (order.length >= count) all.resolve();
    };
    run.listen(first, handler);
    run.listen(second, handler);
    for (let index = 0; index < count; index++) {
      await first.enqueue({ index }, { orderingKey: "k" });
    }
    await within(all.promise, () => `${count} messages; got ${order}`, EVENT_TIMEOUT_MS);
    assertEquals(order, Array.from({ length: count }, (_, index) => index));
    assertEquals(maxRunning, 1, "Handlers for the same ordering key overlapped.");
  });

  define("getDepth counts ready and delayed messages", async (run) => {
    const queue = await run.createQueue();
    if (queue.getDepth == null) return; // Optional method; nothing to check.
    const getDepth = queue.getDepth.bind(queue);
    for (let index = 0; index < 3; index++) await queue.enqueue({ index });
    await queue.enqueue({ index: 3 }, { delay: { hours: 1 } });
    let depth: MessageQueueDepth | undefined;
    const expectDepth = async (expected: MessageQueueDepth, when: string) => {
      // Some engines update their counters a moment after a write settles.
      await waitUntil(async () => {
        depth = await getDepth();
        // ready and delayed are optional; check them when reported.
        return depth.queued === expected.queued &&
          (depth.ready === undefined || depth.ready === expected.ready) &&
          (depth.delayed === undefined || depth.delayed === expected.delayed);
      }, {
        timeoutMs: EVENT_TIMEOUT_MS,
        intervalMs: 200,
        what: () => `depth ${JSON.stringify(expected)} ${when}; last ${JSON.stringify(depth)}`,
      });
    };
    await expectDepth({ queued: 4, ready: 3, delayed: 1 }, "after enqueueing");
    const handled: number[] = [];
    run.listen(queue, (message: { index: number }) => {
      handled.push(message.index);
    });
    await expectDepth({ queued: 1, ready: 0, delayed: 1 }, "after draining the ready ones");
    assertEquals(handled.sort(), [0, 1, 2]);
  });

  define("aborting listen() waits for the running handler to finish", async (run) => {
    const queue = await run.createQueue();
    const started = deferred();
    const release = deferred();
    let handlerFinished = false;
    const listener = run.listen(queue, async () => {
      started.resolve();
      await release.promise;
      handlerFinished = true;
    });
    let finishedWhenResolved: boolean | undefined;
    const observed = listener.done.then(() => {
      finishedWhenResolved = handlerFinished;
    });
    try {
      await queue.enqueue({ kind: "slow" });
      await within(started.promise, "the handler to start", EVENT_TIMEOUT_MS);
      listener.controller.abort();
      // Give a wrong implementation the chance to resolve early; this only
      // checks that something does *not* happen, so its length is not critical.
      await delay(300);
      assertEquals(finishedWhenResolved, undefined, "listen() resolved while a handler ran.");
    } finally {
      // Never leave the handler hanging, even when an assertion failed.
      release.resolve();
    }
    await within(observed, "listen() to resolve after the abort", EVENT_TIMEOUT_MS);
    assertEquals(finishedWhenResolved, true);
  });

  define("competing workers each handle a message once", async (run) => {
    const first = await run.createQueue();
    const second = await run.createQueue();
    const count = 20;
    const handled = new Map<number, number>();
    const all = deferred();
    const handler = async (message: { index: number }) => {
      handled.set(message.index, (handled.get(message.index) ?? 0) + 1);
      await delay(10);
      if (handled.size >= count) all.resolve();
    };
    run.listen(first, handler);
    run.listen(second, handler);
    for (let index = 0; index < count; index++) {
      await (index % 2 === 0 ? first : second).enqueue({ index });
    }
    await within(all.promise, () => `${count} messages; ${handled.size}`, EVENT_TIMEOUT_MS);
    // Let any duplicate delivery surface before counting.
    await delay(1000);
    const duplicates = [...handled].filter(([, times]) => times !== 1);
    assertEquals(duplicates, [], "Some messages were handled more than once.");
    assertEquals(handled.size, count);
  });

  define("a handler that throws does not stop the listener", async (run) => {
    const queue = await run.createQueue();
    const second = deferred();
    run.listen(queue, (message: { index: number }) => {
      if (message.index === 1) throw new Error("Thrown on purpose by the conformance suite.");
      second.resolve();
    });
    await queue.enqueue({ index: 1 });
    await queue.enqueue({ index: 2 });
    await within(second.promise, "the message after the failing one", EVENT_TIMEOUT_MS);
  });

  define("a message whose handler throws is handed out again", async (run) => {
    const queue = await run.createQueue();
    const deliveries: number[] = [];
    const again = deferred();
    run.listen(queue, (message: { index: number }) => {
      deliveries.push(message.index);
      if (deliveries.length === 1) throw new Error("Thrown on purpose by the conformance suite.");
      again.resolve();
    });
    await queue.enqueue({ index: 7 });
    await within(
      again.promise,
      () => `the failed message to come back; got ${deliveries}`,
      EVENT_TIMEOUT_MS + run.leaseMs * 2,
    );
    assertEquals(deliveries.slice(0, 2), [7, 7]);
  });

  define("redeliver() hands the new version out again after its delay", async (run) => {
    const queue = await run.createQueue();
    const seen: { version: number; at: number }[] = [];
    const done = deferred();
    let offered: boolean | undefined;
    run.listen(queue, async (message: { version: number }, redelivery?: MessageRedelivery) => {
      seen.push({ version: message.version, at: Date.now() });
      offered ??= redelivery != null;
      if (redelivery == null) return done.resolve();
      if (message.version === 0) {
        await redelivery.redeliver({ version: 1 }, { delay: { milliseconds: 800 } });
      } else {
        done.resolve();
      }
    });
    await queue.enqueue({ version: 0 });
    await within(done.promise, () => `the redelivery; got ${seen.length}`, EVENT_TIMEOUT_MS);
    if (!offered) {
      if (redelivery) fail(`${name} handed its handler no MessageRedelivery.`);
      return;
    }
    // Let a wrong implementation deliver the first version again.
    await delay(run.leaseMs + 500);
    assertEquals(seen.map((entry) => entry.version), [0, 1]);
    const waited = seen[1].at - seen[0].at;
    assert(waited >= 700, `The message redelivered after 800 ms came back after ${waited} ms.`);
  });

  define(
    "redeliver() rejects a negative delay and a second call, and stores the first",
    async (run) => {
      const queue = await run.createQueue();
      const outcomes = deferred<unknown[]>();
      const second = deferred<unknown>();
      let deliveries = 0;
      run.listen(queue, async (message: string, redelivery?: MessageRedelivery) => {
        if (++deliveries > 1) return second.resolve(message);
        if (redelivery == null) return outcomes.resolve([]);
        const settle = (promise: Promise<void>) =>
          promise.then(() => "stored", (error: unknown) => error);
        outcomes.resolve([
          await settle(redelivery.redeliver("never", { delay: { seconds: -1 } })),
          await settle(redelivery.redeliver("next", { delay: { milliseconds: 200 } })),
          await settle(redelivery.redeliver("again", { delay: { milliseconds: 200 } })),
        ]);
      });
      await queue.enqueue("first");
      const results = await within(outcomes.promise, "the handler");
      if (results.length === 0) {
        if (redelivery) fail(`${name} handed its handler no MessageRedelivery.`);
        return;
      }
      const [negative, stored, again] = results;
      assert(negative instanceof RangeError, `a negative delay gave ${negative}`);
      assert(negative.message.includes("delay"), negative.message);
      assertEquals(stored, "stored");
      assert(again instanceof TypeError, `a second call gave ${again}`);
      // The first call's version, not the original, comes back.
      assertEquals(await within(second.promise, "the redelivered version"), "next");
    },
  );

  define("a redelivered message keeps its ordering key held until it is handled", async (run) => {
    const first = await run.createQueue();
    const second = await run.createQueue();
    const order: string[] = [];
    const done = deferred();
    let offered: boolean | undefined;
    const handler = async (
      message: { name: string; attempt: number },
      redelivery?: MessageRedelivery,
    ) => {
      order.push(`${message.name}${message.attempt}`);
      offered ??= redelivery != null;
      if (redelivery != null && message.name === "create" && message.attempt < 2) {
        await redelivery.redeliver(
          { ...message, attempt: message.attempt + 1 },
          { delay: { milliseconds: 300 } },
        );
        return;
      }
      if (message.name === "delete") done.resolve();
    };
    run.listen(first, handler);
    run.listen(second, handler);
    await first.enqueue({ name: "create", attempt: 0 }, { orderingKey: "note-1" });
    await first.enqueue({ name: "delete", attempt: 0 }, { orderingKey: "note-1" });
    await within(done.promise, () => `the delete; got ${order}`, EVENT_TIMEOUT_MS);
    if (!offered) {
      if (redelivery) fail(`${name} handed its handler no MessageRedelivery.`);
      return;
    }
    assertEquals(order, ["create0", "create1", "create2", "delete0"]);
  });

  defineDeduplicationTests(define, name, factoryModule, deduplication, durable);
  definePriorityTests(define, name, priority);

  if (prefetch) {
    define(
      "prefetched messages stay leased while listening and are handed back, in order, on stop",
      async (run) => {
        // A lease far longer than the test: only the hand-back frees them.
        const longLease = { leaseMs: 600_000 };
        const first = await run.createQueue({ ...longLease, prefetch: 2 });
        const depth = () => {
          if (first.getDepth == null) fail(`${name} has prefetch: true but no getDepth().`);
          return first.getDepth();
        };
        // Enqueued before listening, so that the first claim can take three.
        for (const message of [1, 2, 3, 4]) await first.enqueue(message);
        const started = deferred();
        const release = deferred();
        const seen: unknown[] = [];
        const listener = run.listen(first, async (message) => {
          seen.push(message);
          started.resolve();
          await release.promise;
        });
        try {
          await within(started.promise, "the first handler");
          // One message running, two prefetched and leased: one left ready.
          await waitUntil(async () => (await depth()).ready === 1, {
            what: "two messages to be prefetched",
          });
          listener.controller.abort();
          await waitUntil(async () => (await depth()).ready === 3, {
            what: "the prefetched messages to be handed back while the handler runs",
          });
        } finally {
          // Also on failure, so that the listener can stop.
          release.resolve();
        }
        await within(listener.done, "listen() to resolve");
        assertEquals(seen, [1]);
        assertEquals((await depth()).queued, 3);
        const second = await run.createQueue({ ...longLease, prefetch: 0 });
        const received: unknown[] = [];
        const counts: (number | undefined)[] = [];
        const all = deferred();
        run.listen(second, (message, redelivery) => {
          received.push(message);
          counts.push(redelivery?.deliveryCount);
          if (received.length === 3) all.resolve();
        });
        await within(all.promise, "the handed-back messages");
        assertEquals(received, [2, 3, 4]);
        // Handed back unstarted: those claims were not hand-outs.
        if (options.deliveryCount ?? false) assertEquals(counts, [1, 1, 1]);
      },
    );
  }

  if (options.deliveryCount ?? false) {
    define(
      "a handler that throws gets its message again with deliveryCount up, and redeliver() starts it again at 1",
      async (run) => {
        const queue = await run.createQueue();
        const seen: [string, number | undefined][] = [];
        const done = deferred();
        run.listen(queue, async (message: { version: number }, redelivery) => {
          seen.push([`v${message.version}`, redelivery?.deliveryCount]);
          if (message.version === 2) return done.resolve();
          if (seen.length === 1) throw new Error("Thrown on purpose.");
          await redelivery!.redeliver({ version: 2 }, { delay: { milliseconds: 0 } });
        });
        await queue.enqueue({ version: 1 });
        await within(
          done.promise,
          () => `the redelivered version; got ${JSON.stringify(seen)}`,
          EVENT_TIMEOUT_MS + run.leaseMs * 3,
        );
        assertEquals(seen, [["v1", 1], ["v1", 2], ["v2", 1]]);
      },
    );
  }

  if (!durable) return;

  define("enqueue on a disposed queue rejects with a QueueClosedError", async (run) => {
    const queue = await run.createQueue();
    const dispose = (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose];
    if (dispose == null) fail("A durable queue must have [Symbol.asyncDispose]().");
    await dispose.call(queue);
    let error: unknown;
    try {
      await queue.enqueue({ kind: "after-dispose" });
    } catch (caught) {
      error = caught;
    }
    // Workers and retry code tell "closed" apart from an engine failure by
    // this class alone, whatever the backend.
    assertInstanceOf(error, QueueClosedError);
  });

  define("a handler running past the lease is not redelivered to a live worker", async (run) => {
    const first = await run.createQueue();
    const second = await run.createQueue();
    const deliveries: string[] = [];
    const started = deferred();
    const finished = deferred();
    run.listen(first, async () => {
      deliveries.push("first");
      started.resolve();
      // The workload: a handler that outlives three leases.
      await delay(run.leaseMs * 3);
      finished.resolve();
    });
    await first.enqueue({ kind: "long" });
    await within(started.promise, "the first worker to start", EVENT_TIMEOUT_MS);
    // The second worker joins only now, so the first one surely got the message.
    run.listen(second, () => {
      deliveries.push("second");
    });
    await within(finished.promise, "the handler", EVENT_TIMEOUT_MS + run.leaseMs * 3);
    await delay(run.leaseMs * 2);
    assertEquals(deliveries, ["first"], "The message was redelivered while being handled.");
  });

  if (options.deliveryCount ?? false) {
    define(
      "a message that kills every worker handling it is handed out with its delivery count climbing until it is quarantined, and the message behind it runs",
      async (run) => {
        await runPoisonTest(run, factoryModule, { kill: options.poisonKill ?? "sigkill" });
      },
    );
  }

  define("a message whose worker process was killed is delivered again", async (run) => {
    const message = { kind: "crash", id: run.namespace };
    const received = await runCrashTest(run, factoryModule, message);
    if (received === undefined) fail("The message was not redelivered.");
    assertEquals(received, message);
  });

  if (!(options.leases ?? false)) return;
  define(
    "a worker whose lease ran out cannot acknowledge the message another worker holds",
    (run) => runStaleAcknowledgementTest(run, factoryModule),
  );
}
