// Two real processes on one SQLite file, joined by SqlitePubSub: progress
// reported by a task in the worker process reaches watchTask() in this
// one well before the watcher's 5 s recheck, and cancelTask() here aborts
// the handler running there.
import { fileURLToPath } from "node:url";
import { assert, assertEquals, deferred, test, within } from "@fedify/fixture";
import { createFederationBuilder, type TaskUpdate } from "@fedwork/core";
import { SqliteKvStore, SqliteMessageQueue, SqlitePubSub } from "./mod.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { holdSchema } from "./testdata/hold-task.ts";
import { startLineChild } from "./testdata/line-child.ts";

/**
 * The ceiling asserted for each cross-process hop: generous for a loaded
 * machine, and still below the 5 s recheck that was all there was before
 * SqlitePubSub (bench/sqlite-pubsub.ts measures the real figure).
 */
const HOP_CEILING_MS = 3_000;

test("SqlitePubSub carries progress and cancellation between two processes on one file", async () => {
  const namespace = `fedwork-sqlite-cross-${crypto.randomUUID()}`;
  const path = databasePath(namespace);
  const builder = createFederationBuilder<void>();
  const hold = builder.defineTask("hold", { schema: holdSchema, handler() {} });
  await using kv = new SqliteKvStore({ path });
  await using queue = new SqliteMessageQueue({ path });
  await using pubsub = new SqlitePubSub({ path });
  const federation = await builder.build({ kv, queue, pubsub, manuallyStartQueue: true });
  await queue.getDepth(); // Create the tables before the child does.
  const script = fileURLToPath(new URL("./testdata/held-task-worker.ts", import.meta.url));
  const child = startLineChild(script, [path]);
  const watching = new AbortController();
  try {
    await within(child.line("READY"), "the worker process to listen");
    const ctx = federation.createContext(new URL("https://app.example/"), undefined);
    const result = await ctx.enqueueTask(hold, { label: "cross" });
    assert(result.status === "enqueued");
    const id = result.messageId;
    const progressSeen = deferred<{ update: TaskUpdate; at: number }>();
    const cancelledSeen = deferred<TaskUpdate>();
    const watcher = (async () => {
      for await (const update of federation.watchTask(id, { signal: watching.signal })) {
        if (update.kind === "progress") progressSeen.resolve({ update, at: Date.now() });
        if (update.status.state === "cancelled") cancelledSeen.resolve(update);
      }
    })();
    const { update, at } = await within(progressSeen.promise, "the progress in this process");
    const reportedAt = (update.status.progress?.data as { at: number }).at;
    assert(
      at - reportedAt < HOP_CEILING_MS,
      `The progress took ${at - reportedAt} ms to reach the other process.`,
    );

    const cancelledAt = Date.now();
    const cancel = await federation.cancelTask(id, { reason: "from the other process" });
    assertEquals(cancel, { status: "cancelled", id, state: "running" });
    const aborted = await within(child.line("ABORTED"), "the handler in the worker to abort");
    const abortMs = Date.now() - cancelledAt;
    assertEquals(aborted, "ABORTED from the other process");
    assert(abortMs < HOP_CEILING_MS, `The cancellation took ${abortMs} ms to abort the handler.`);
    const final = await within(cancelledSeen.promise, "the cancelled state in this process");
    assertEquals(final.status.reason, "from the other process");
    await within(watcher, "the watch to end at the terminal state");
  } finally {
    watching.abort();
    const code = await within(child.stop(), "the worker process to exit");
    await cleanup(namespace);
    assertEquals(code, 0);
  }
});
