import { assert, assertEquals, fail } from "./test-runner.ts";
import type { MessageQueue } from "@fedwork/core";
import { EVENT_TIMEOUT_MS, type QueueTestRun } from "./queue-harness.ts";
import { deferred, within } from "./wait.ts";

/** How many low-priority messages the backlog test enqueues. */
const LOW_COUNT = 1000;
/** How many high-priority messages it enqueues after them. */
const HIGH_COUNT = 10;
/**
 * How many low-priority messages may start between the high ones' enqueue
 * and the last high one's start: those a listener had already claimed or
 * prefetched (or the broker had already pushed to it) when the high ones
 * arrived.  Every Fedwork listener holds far fewer; a queue that ignores
 * priorities starts all 999 remaining ones first.
 */
const CLAIMED_ALLOWANCE = 64;

/**
 * Registers the tests of message priority
 * (`MessageQueueEnqueueOptions.priority`).  A queue without
 * `nativePriority` must refuse a priority other than 0 (and fails the
 * tests when `required` is set); one with it must hand out ready messages
 * highest priority first and keep a key's messages in order.
 * @param define Registers one test.
 * @param name The backend's name.
 * @param required Whether the queue must order by priority.
 */
export function definePriorityTests(
  define: (behaviour: string, body: (run: QueueTestRun) => Promise<void>) => void,
  name: string,
  required: boolean,
): void {
  const offers = (queue: MessageQueue): boolean => {
    if (queue.nativePriority === true) return true;
    if (required) fail(`${name} does not order messages by priority (nativePriority).`);
    return false;
  };

  define(
    "a queue without nativePriority refuses a priority instead of ignoring it",
    async (run) => {
      const queue = await run.createQueue();
      if (queue.nativePriority === true) return;
      let refused = false;
      try {
        await queue.enqueue({ kind: "prioritized" }, { priority: 1 });
      } catch {
        refused = true;
      }
      assert(refused, `${name} has no nativePriority but took a message with a priority.`);
    },
  );

  define(
    `${HIGH_COUNT} high-priority messages enqueued after ${LOW_COUNT} low ones start before the remaining low ones`,
    async (run) => {
      const queue = await run.createQueue();
      if (!offers(queue)) return;
      const order: string[] = [];
      const firstStarted = deferred();
      const gate = deferred();
      const all = deferred();
      run.listen(queue, async (message: { kind: string; index: number }) => {
        order.push(`${message.kind}${message.index}`);
        if (order.length === 1) {
          // Hold the listener busy until the high ones are in the queue, so
          // that the test does not depend on how fast it drains.
          firstStarted.resolve();
          await gate.promise;
        }
        if (order.length >= LOW_COUNT + HIGH_COUNT) all.resolve();
      });
      const low = Array.from({ length: LOW_COUNT }, (_, index) => ({ kind: "low", index }));
      try {
        for (let i = 0; i < low.length; i += 100) {
          const batch = low.slice(i, i + 100);
          if (queue.enqueueMany != null) await queue.enqueueMany(batch, { priority: -1 });
          else for (const message of batch) await queue.enqueue(message, { priority: -1 });
        }
        await within(firstStarted.promise, "the first low message to start", EVENT_TIMEOUT_MS);
        for (let index = 0; index < HIGH_COUNT; index++) {
          await queue.enqueue({ kind: "high", index }, { priority: 3 });
        }
      } finally {
        gate.resolve();
      }
      await within(
        all.promise,
        () => `${LOW_COUNT + HIGH_COUNT} messages; got ${order.length}`,
        EVENT_TIMEOUT_MS * 2,
      );
      const lastHigh = order.findLastIndex((label) => label.startsWith("high"));
      const lowBefore = order.slice(0, lastHigh).filter((label) => label.startsWith("low"));
      assert(
        lowBefore.length <= CLAIMED_ALLOWANCE,
        `${lowBefore.length} low-priority messages started before the last high-priority one ` +
          `(at most ${CLAIMED_ALLOWANCE}, those already claimed, may).`,
      );
      assertEquals(new Set(order).size, LOW_COUNT + HIGH_COUNT, "Some message ran twice.");
      // Equal priorities keep their order.
      const highs = order.filter((label) => label.startsWith("high"));
      assertEquals(highs, Array.from({ length: HIGH_COUNT }, (_, index) => `high${index}`));
    },
  );

  define(
    "messages sharing an ordering key keep their order whatever their priorities",
    async (run) => {
      const queue = await run.createQueue();
      if (!offers(queue)) return;
      const order: string[] = [];
      const all = deferred();
      run.listen(queue, (message: { label: string }) => {
        order.push(message.label);
        if (order.length >= 4) all.resolve();
      });
      await queue.enqueue({ label: "k1" }, { orderingKey: "k", priority: -3 });
      await queue.enqueue({ label: "k2" }, { orderingKey: "k", priority: 4 });
      await queue.enqueue({ label: "k3" }, { orderingKey: "k", priority: 0 });
      await queue.enqueue({ label: "free" }, { priority: 2 });
      await within(all.promise, () => `4 messages; got ${order}`, EVENT_TIMEOUT_MS);
      assertEquals(order.filter((label) => label.startsWith("k")), ["k1", "k2", "k3"]);
    },
  );

  define("a priority outside -5 to 5 or not an integer is refused", async (run) => {
    const queue = await run.createQueue();
    if (!offers(queue)) return;
    for (const priority of [6, -6, 0.5]) {
      let refused = false;
      try {
        await queue.enqueue({ kind: "bad" }, { priority });
      } catch {
        refused = true;
      }
      assert(refused, `${name} took a message with priority ${priority}.`);
    }
    if (queue.getDepth != null) assertEquals((await queue.getDepth()).queued, 0);
  });
}
