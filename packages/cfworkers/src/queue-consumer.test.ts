// Typed tasks through Cloudflare Queues inside workerd: the test Worker
// enqueues with WorkersMessageQueue from its fetch() handler, and its
// queue() handler runs the batches through processQueueBatch().
import { assert, assertEquals, test } from "@fedify/fixture";
import { waitUntil } from "@fedwork/testing";
import { startWorker, type TestWorker } from "./testdata/miniflare.ts";

/** What one attempt of the test task recorded, inside the Worker. */
interface RunRecord {
  readonly attempt: number;
  readonly at: number;
  readonly content: string;
  readonly noteId: string | null;
}

// Miniflare and workerd start in a few seconds; a minute only bounds how
// long a broken setup takes to fail.
const TIMEOUT_MS = 60_000;

// workerd's clock only moves between I/O, so a one-second delay measured
// inside the Worker may read a little short.
const CLOCK_SLACK_MS = 100;

async function runsOf(worker: TestWorker, run: string, count: number): Promise<RunRecord[]> {
  let runs: RunRecord[] = [];
  await waitUntil(async () => {
    runs = await worker.get<RunRecord[]>(`/runs?run=${run}`);
    return runs.length >= count;
  }, { what: () => `${count} runs of ${run}; got ${JSON.stringify(runs)}`, timeoutMs: TIMEOUT_MS });
  return runs;
}

test("a typed task carrying a Note runs in the Worker's queue consumer", async () => {
  await using worker = await startWorker();
  await worker.post("/enqueue", { task: "flaky", run: "once", content: "Hello", failTimes: 0 });
  const [run] = await runsOf(worker, "once", 1);
  assertEquals([run.attempt, run.content, run.noteId], [
    1,
    "Hello",
    "https://example.com/notes/once",
  ]);
  assertEquals(await worker.get<number>("/retried"), 0);
});

test("a failed task runs again after its retry policy's delay", async () => {
  await using worker = await startWorker();
  await worker.post("/enqueue", { task: "flaky", run: "flaky", content: "Again", failTimes: 1 });
  const [first, second] = await runsOf(worker, "flaky", 2);
  assertEquals([first.attempt, second.attempt, second.content], [1, 2, "Again"]);
  const gap = second.at - first.at;
  assert(gap >= 1000 - CLOCK_SLACK_MS, `the retry ran ${gap} ms after the failure`);
  // The retry was sent as a new message, not handed back to Cloudflare.
  assertEquals(await worker.get<number>("/retried"), 0);
});

test(
  "a message whose retry cannot be sent is delivered again through message.retry()",
  async () => {
    await using worker = await startWorker();
    // The task's retry policy asks for a day, longer than Cloudflare Queues
    // delays a message, so the retry cannot be sent and processQueueBatch()
    // hands the message back with retry({ delaySeconds: 1 }).
    await worker.post("/enqueue", {
      task: "unsendable",
      run: "handed-back",
      content: "Back",
      failTimes: 1,
    });
    const [first, second] = await runsOf(worker, "handed-back", 2);
    assertEquals([first.attempt, second.attempt, second.content], [1, 2, "Back"]);
    const gap = second.at - first.at;
    assert(gap >= 1000 - CLOCK_SLACK_MS, `the redelivery came ${gap} ms after the failure`);
    assertEquals(await worker.get<number>("/retried"), 1);
  },
);

test("a delayed task runs no earlier than its delay", async () => {
  await using worker = await startWorker();
  const { enqueuedAt } = await worker.post<{ enqueuedAt: number }>("/enqueue", {
    task: "flaky",
    run: "later",
    content: "Later",
    failTimes: 0,
    delaySeconds: 2,
  });
  const [run] = await runsOf(worker, "later", 1);
  const waited = run.at - enqueuedAt;
  assert(waited >= 2000 - CLOCK_SLACK_MS, `the task ran ${waited} ms after it was enqueued`);
});

test("a deduplication key holds in D1KvStore until its task has run", async () => {
  await using worker = await startWorker({ store: "d1" });
  const enqueue = (delaySeconds?: number) =>
    worker.post<{ status: string }>("/enqueue", {
      task: "flaky",
      run: "dedup",
      content: "Once",
      failTimes: 0,
      deduplicationKey: "the-key",
      ...(delaySeconds == null ? {} : { delaySeconds }),
    });
  // Delayed, so that the first task is still pending when the second comes.
  const first = await enqueue(5);
  const second = await enqueue();
  assertEquals([first.status, second.status], ["enqueued", "deduplicated"]);
  await runsOf(worker, "dedup", 1);
  // The run freed the key: the next enqueue with it goes through.
  await waitUntil(async () => (await enqueue()).status === "enqueued", {
    what: "the deduplication key to be freed after the run",
    timeoutMs: TIMEOUT_MS,
  });
  assertEquals((await runsOf(worker, "dedup", 2)).length, 2);
});

test("a deduplication key is refused with WorkersKvStore, which has no cas()", async () => {
  await using worker = await startWorker();
  const response = await worker.fetch("/enqueue", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      task: "flaky",
      run: "refused",
      content: "Never",
      failTimes: 0,
      deduplicationKey: "the-key",
    }),
  });
  assertEquals(response.status, 500);
  const { name } = await response.json() as { name: string };
  assertEquals(name, "TaskDeduplicationNotSupportedError");
});

test("a message Cloudflare keeps delivering without an outcome is quarantined after maxDeliveries", async () => {
  await using worker = await startWorker();
  // Every run fails and its retry cannot be sent, so processQueueBatch()
  // hands it back with message.retry() and Cloudflare's attempts climb;
  // the task allows 2.
  await worker.post("/enqueue", { task: "poison", run: "poison", content: "P", failTimes: 100 });
  let failed: { reason: string; attempts: number }[] = [];
  await waitUntil(async () => {
    failed = await worker.get<{ reason: string; attempts: number }[]>("/failed?task=poison-note");
    return failed.length > 0;
  }, { what: () => `the quarantined task; got ${JSON.stringify(failed)}`, timeoutMs: TIMEOUT_MS });
  assertEquals(failed.map((record) => record.reason), ["poison"]);
  // Run on the first two deliveries, not on the third.
  assertEquals((await worker.get<RunRecord[]>("/runs?run=poison")).length, 2);
  // Handed back with retry() (the Worker records it by message id, which
  // stays the same across deliveries).
  assertEquals(await worker.get<number>("/retried"), 1);
});
