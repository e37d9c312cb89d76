import { assert, assertEquals, fail } from "./test-runner.ts";
import type { MessageQueue, MessageRedelivery } from "@fedwork/core";
import { spawn } from "node:child_process";
import process from "node:process";
import { childCommand, childEnvironment } from "./child-process.ts";
import { EVENT_TIMEOUT_MS, type QueueTestRun } from "./queue-harness.ts";
import { deferred, delay, waitUntil, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_TIMEOUT_MS = 90_000;

/**
 * Registers the tests of native deduplication (`enqueueDeduplicated()`).
 * Each test returns early for a queue without `nativeDeduplication`, or
 * fails when `required` is set.
 * @param define Registers one test.
 * @param name The backend's name.
 * @param factoryModule The factory module's URL, for the child processes.
 * @param required Whether the queue must deduplicate natively.
 * @param durable Whether the queue is shared across processes.
 */
export function defineDeduplicationTests(
  define: (behaviour: string, body: (run: QueueTestRun) => Promise<void>) => void,
  name: string,
  factoryModule: string,
  required: boolean,
  durable: boolean,
): void {
  const offers = (queue: MessageQueue): boolean => {
    if (queue.nativeDeduplication && typeof queue.enqueueDeduplicated === "function") return true;
    if (required) fail(`${name} does not deduplicate natively (nativeDeduplication).`);
    return false;
  };
  const options = (key: string, ttlMs = 300_000) => ({
    deduplicationKey: key,
    deduplicationTtl: { milliseconds: ttlMs },
  });

  define("enqueueDeduplicated adds one message while its key is held", async (run) => {
    const queue = await run.createQueue();
    if (!offers(queue)) return;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => queue.enqueueDeduplicated!({ i }, options("k"))),
    );
    assertEquals(results.filter((added) => added).length, 1);
    assertEquals(await queue.enqueueDeduplicated!({ i: "other" }, options("other")), true);
    const received: unknown[] = [];
    const both = deferred();
    run.listen(queue, (message) => {
      received.push(message);
      if (received.length === 2) both.resolve();
    });
    await within(both.promise, "the two messages", EVENT_TIMEOUT_MS);
    // Give a wrong implementation the time to hand out a duplicate.
    await delay(300);
    assertEquals(received.length, 2);
  });

  define("a deduplication key is free once its message is acknowledged", async (run) => {
    const queue = await run.createQueue();
    if (!offers(queue)) return;
    assertEquals(await queue.enqueueDeduplicated!({ n: 1 }, options("k")), true);
    const handled = deferred();
    run.listen(queue, () => handled.resolve());
    await within(handled.promise, "the message", EVENT_TIMEOUT_MS);
    // Acknowledgements may be batched: poll until the key is free.
    await waitUntil(() => queue.enqueueDeduplicated!({ n: 2 }, options("k")), {
      timeoutMs: EVENT_TIMEOUT_MS,
      what: "the key to be free after the acknowledgement",
    });
  });

  define("a deduplication key is free after its TTL even while its message waits", async (run) => {
    const queue = await run.createQueue();
    if (!offers(queue)) return;
    const delayed = { ...options("k", 400), delay: { hours: 1 } };
    assertEquals(await queue.enqueueDeduplicated!({ n: 1 }, delayed), true);
    assertEquals(await queue.enqueueDeduplicated!({ n: 2 }, delayed), false);
    await delay(500);
    assertEquals(await queue.enqueueDeduplicated!({ n: 3 }, delayed), true);
  });

  define("a message redelivered in place keeps holding its key", async (run) => {
    const queue = await run.createQueue();
    if (!offers(queue)) return;
    const redelivered = deferred<boolean>();
    run.listen(queue, async (message: { n: number }, redelivery?: MessageRedelivery) => {
      if (redelivery == null) return redelivered.resolve(false);
      if (message.n === 1) {
        await redelivery.redeliver({ n: 2 }, { delay: { hours: 1 } });
        redelivered.resolve(true);
      }
    });
    assertEquals(await queue.enqueueDeduplicated!({ n: 1 }, options("k")), true);
    if (!await within(redelivered.promise, "the redelivery", EVENT_TIMEOUT_MS)) return;
    assertEquals(await queue.enqueueDeduplicated!({ n: 3 }, options("k")), false);
  });

  if (!durable) return;

  define("concurrent enqueues with one key from two processes add one message", async (run) => {
    const queue = await run.createQueue();
    if (!offers(queue)) return;
    // Make sure the namespace exists before the children race to create it.
    assertEquals(await queue.enqueueDeduplicated!({ setup: true }, options("setup")), true);
    const counts = await Promise.all([0, 1].map(() => runDedupWorker(run, factoryModule, "k")));
    assertEquals(counts[0] + counts[1], 1, `added per process: ${counts}`);
    if (queue.getDepth != null) assertEquals((await queue.getDepth()).queued, 2);
    const received: { kind?: string }[] = [];
    const both = deferred();
    run.listen(queue, (message) => {
      received.push(message);
      if (received.length === 2) both.resolve();
    });
    await within(both.promise, "the messages", EVENT_TIMEOUT_MS);
    await delay(300);
    assertEquals(received.filter((message) => message.kind === "dedup").length, 1);
    assert(received.length === 2);
  });
}

/** Runs one dedup worker process and returns how many messages it added. */
async function runDedupWorker(
  run: QueueTestRun,
  factoryModule: string,
  key: string,
): Promise<number> {
  const { command, args } = childCommand(new URL("./dedup-worker.ts", import.meta.url), [
    factoryModule,
    run.namespace,
    String(run.leaseMs),
    key,
    "25",
  ]);
  const child = spawn(command, args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk);
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk);
  const exited = new Promise<number | null>((resolve) => {
    child.on("close", (code) => resolve(code));
    child.on("error", () => resolve(-1));
  });
  let code: number | null;
  try {
    code = await within(exited, "the dedup worker to finish", CHILD_TIMEOUT_MS);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  const match = /^ADDED (\d+)$/m.exec(stdout);
  if (code !== 0 || match == null) {
    throw new Error(
      `The dedup worker failed (exit code ${code}).\nCommand: ${command} ${args.join(" ")}\n` +
        `stdout:\n${stdout}\nstderr:\n${stderr}`,
    );
  }
  return Number(match[1]);
}
