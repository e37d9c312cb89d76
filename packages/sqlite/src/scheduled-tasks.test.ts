// Recurring tasks on a durable backend: two worker processes share one
// SQLite file (queue and key–value store) and run each tick exactly once.
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, deferred, test, within } from "@fedify/fixture";
import { createFederationBuilder } from "@fedwork/core";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { SqliteKvStore, SqliteMessageQueue } from "./mod.ts";
import { tickSchema } from "./testdata/tick-task.ts";

const EVERY_MS = 400;
const TICKS = 6;

test("two worker processes on one SQLite file run each recurring tick exactly once", async () => {
  const namespace = `fedwork-sqlite-schedule-${crypto.randomUUID()}`;
  const path = databasePath(namespace);
  const builder = createFederationBuilder<void>();
  const tick = builder.defineTask("tick", { schema: tickSchema, handler() {} });
  await using kv = new SqliteKvStore({ path });
  await using queue = new SqliteMessageQueue({ path });
  // The web process: schedules, never runs workers.
  const web = await builder.build({
    kv,
    queue,
    manuallyStartQueue: true,
    origin: "https://web.example",
  });
  await queue.getDepth(); // Create the tables before the workers race to.
  const runs: { tick: number; pid: number }[] = [];
  const enough = deferred();
  const onRun = (run: { tick: number; pid: number }) => {
    runs.push(run);
    if (runs.length >= TICKS) enough.resolve();
  };
  const script = fileURLToPath(new URL("./testdata/schedule-worker.ts", import.meta.url));
  const workers = [startWorker(script, path, onRun), startWorker(script, path, onRun)];
  try {
    await within(Promise.all(workers.map((w) => w.ready)), "the workers to start", 90_000);
    const schedule = await web.scheduleTask(tick, {}, { every: { milliseconds: EVERY_MS } });
    await within(enough.promise, `${TICKS} runs`, 60_000);
    for (const worker of workers) worker.stop();
    await within(Promise.all(workers.map((w) => w.exited)), "the workers to exit", 30_000);
    const anchor = schedule.createdAt.getTime();
    const ticks = runs.map(({ tick }) => (tick - anchor) / EVERY_MS).sort((a, b) => a - b);
    // Every tick once, in a row (the first may be a catch-up: the workers
    // see a schedule made elsewhere within a refresh).
    assertEquals(new Set(ticks).size, ticks.length, `ticks ${ticks}`);
    assertEquals(ticks, Array.from({ length: ticks.length }, (_, i) => ticks[0] + i));
    assert(ticks.length >= TICKS && ticks[0] <= 3, `ticks ${ticks}`);
  } finally {
    for (const worker of workers) worker.stop();
    await Promise.allSettled(workers.map((w) => w.exited));
    await cleanup(namespace);
  }
});

/** Starts a worker process that prints READY, then one RAN line per run. */
function startWorker(
  script: string,
  path: string,
  onRun: (run: { tick: number; pid: number }) => void,
): { ready: Promise<void>; exited: Promise<void>; stop(): void } {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const command = deno == null ? process.execPath : deno.execPath();
  const args = deno == null ? [script, path] : ["run", "-A", script, path];
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(command, args, { cwd: process.cwd(), env, stdio: ["pipe", "pipe", "pipe"] });
  let buffer = "";
  let stderr = "";
  const ready = deferred();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line === "READY") ready.resolve();
      else if (line.startsWith("RAN ")) onRun(JSON.parse(line.slice(4)));
    }
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code === 0 || signal != null) resolve();
      else reject(new Error(`A worker exited with ${code}:\n${stderr}`));
    });
  });
  exited.catch(() => {});
  return {
    ready: Promise.race([ready.promise, exited]),
    exited,
    stop: () => {
      if (!child.stdin.destroyed) child.stdin.end();
    },
  };
}
