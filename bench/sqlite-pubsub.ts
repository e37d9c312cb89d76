// A local measurement of SqlitePubSub between two real processes on one
// SQLite file (not a test): how long a task's progress, reported in a
// worker process, takes to reach watchTask() in this process, and how long
// cancelTask() here takes to abort the handler running there.  Before
// SqlitePubSub, progress arrived only on the watcher's 5 s recheck and a
// running task's cancellation did not arrive at all.
//
// Usage: node -C fedwork-source bench/sqlite-pubsub.ts   (or deno run -A / bun)
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createFederationBuilder } from "@fedwork/core";
import { SqliteKvStore, SqliteMessageQueue, SqlitePubSub } from "@fedwork/sqlite";
import { holdSchema } from "../packages/sqlite/src/testdata/hold-task.ts";
import { startLineChild } from "../packages/sqlite/src/testdata/line-child.ts";
import { percentile } from "./harness/stats.ts";

const TASKS = 10;
const REPORTS_PER_TASK = 50;

const path = join(tmpdir(), `fedwork-bench-${crypto.randomUUID()}.sqlite`);
const builder = createFederationBuilder<void>();
const hold = builder.defineTask("hold", { schema: holdSchema, handler() {} });
const kv = new SqliteKvStore({ path });
const queue = new SqliteMessageQueue({ path });
const pubsub = new SqlitePubSub({ path });
const federation = await builder.build({ kv, queue, pubsub, manuallyStartQueue: true });
await queue.getDepth();
const script = fileURLToPath(
  new URL("../packages/sqlite/src/testdata/held-task-worker.ts", import.meta.url),
);
const child = startLineChild(script, [path, String(REPORTS_PER_TASK)]);
const progressMs: number[] = [];
const cancelMs: number[] = [];
try {
  await child.line("READY");
  const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
  for (let t = 0; t < TASKS; t++) {
    const result = await ctx.enqueueTask(hold, { label: `bench ${t}` });
    if (result.status !== "enqueued") throw new Error("Not enqueued.");
    const watching = new AbortController();
    let reports = 0;
    let allReported!: () => void;
    const reported = new Promise<void>((resolve) => (allReported = resolve));
    const watcher = (async () => {
      for await (const update of federation.watchTask(result.messageId, watching)) {
        if (update.kind !== "progress") continue;
        progressMs.push(Date.now() - (update.status.progress?.data as { at: number }).at);
        if (++reports === REPORTS_PER_TASK) allReported();
      }
    })();
    await reported;
    const from = child.lines.length;
    const start = Date.now();
    await federation.cancelTask(result.messageId);
    await child.line("ABORTED", from);
    cancelMs.push(Date.now() - start);
    await watcher;
  }
} finally {
  await child.stop();
  await queue[Symbol.asyncDispose]();
  await pubsub[Symbol.asyncDispose]();
  await kv[Symbol.asyncDispose]();
  await Promise.all(["", "-wal", "-shm"].map((s) => rm(path + s, { force: true })));
}

const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const sort = (values: number[]) => [...values].sort((a, b) => a - b);
const progress = sort(progressMs);
const cancel = sort(cancelMs);
const rows: [string, string][] = [
  [`progress to watcher, p50 (${progress.length} reports)`, `${percentile(progress, 50)} ms`],
  ["progress to watcher, p90", `${percentile(progress, 90)} ms`],
  ["progress to watcher, max", `${progress.at(-1)} ms`],
  [`cancelTask() to handler abort, p50 (${cancel.length} tasks)`, `${percentile(cancel, 50)} ms`],
  ["cancelTask() to handler abort, max", `${cancel.at(-1)} ms`],
];
const width = Math.max(...rows.map(([label]) => label.length));
console.log(`SqlitePubSub between two processes on ${runtime} (50 ms poll interval)`);
console.log(`| ${"measurement".padEnd(width)} | value    |`);
console.log(`| ${"-".repeat(width)} | -------- |`);
for (const [label, value] of rows) console.log(`| ${label.padEnd(width)} | ${value.padEnd(8)} |`);
