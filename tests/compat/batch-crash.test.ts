// Task batches survive SIGKILLed workers on @fedwork/sqlite, @fedwork/redis
// and @fedwork/postgres: two worker processes run the members while this
// test kills one of them at a random moment, again and again, adding a new
// batch each time; then each batch's completion task must have run, with
// the right counts, from exactly one task (never lost, never a second
// one).  A handful of kills per engine by default; set
// FEDWORK_BATCH_CRASH_KILLS for a longer run.
import { type ChildProcess, spawn } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { assertEquals, deferred, test, waitUntil, within } from "@fedify/fixture";
import {
  BATCH_MEMBERS,
  type BatchApp,
  createBatchApp,
  failsForGood,
  FANNED_OUT,
} from "./testdata/batch-app.ts";
import { FEDWORK_ENGINES, type FedworkEngine } from "./testdata/fedwork-engines.ts";
import { createNamespace } from "./testdata/services.ts";

const LEASE_MS = 1_500;
const KILLS = Number(process.env.FEDWORK_BATCH_CRASH_KILLS ?? "4");
// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
const WORKERS = 2;

interface Worker {
  readonly child: ChildProcess;
  readonly started: Promise<void>;
  readonly exited: Promise<string>;
  output(): string;
}

function startWorker(engine: FedworkEngine, namespace: string, log: string): Worker {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // node:test marks the processes it spawns; a child must run normally.
    if (value !== undefined && key !== "NODE_TEST_CONTEXT") env[key] = value;
  }
  const script = fileURLToPath(new URL("./testdata/batch-worker.ts", import.meta.url));
  const args = [engine.name, namespace, String(LEASE_MS), log];
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const [command, commandArgs] = deno != null
    ? [deno.execPath(), ["run", "-A", script, ...args]]
    : [process.execPath, [script, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const started = deferred<void>();
  const exited = deferred<string>();
  child.stdout!.on("data", (chunk: Buffer) => {
    output += chunk;
    if (output.includes("WORKER STARTED")) started.resolve();
  });
  child.stderr!.on("data", (chunk: Buffer) => output += chunk);
  child.on("exit", (code, signal) => exited.resolve(`exited (code ${code}, signal ${signal})`));
  child.on("error", (error) => exited.resolve(`failed to start: ${error}`));
  return { child, started: started.promise, exited: exited.promise, output: () => output };
}

async function waitStarted(worker: Worker): Promise<void> {
  const outcome = await within(
    Promise.race([
      worker.started.then(() => undefined),
      worker.exited.then((reason) => reason),
    ]),
    "a batch worker to start",
    CHILD_START_TIMEOUT_MS,
  );
  if (outcome !== undefined) throw new Error(`A batch worker ${outcome}:\n${worker.output()}`);
}

async function enqueueBatch(app: BatchApp): Promise<string> {
  const ctx = app.federation.createContext(new URL("https://example.com/"), undefined);
  const { batchId } = await ctx.enqueueBatch(
    Array.from({ length: BATCH_MEMBERS }, (_, n) => ({ task: app.member, data: { n } })),
    { onComplete: app.finished },
  );
  return batchId;
}

interface CompletionLine {
  readonly batchId: string;
  readonly taskId: string;
  readonly total: number;
  readonly completed: number;
  readonly failed: number;
}

async function completionLines(log: string): Promise<CompletionLine[]> {
  const text = await readFile(log, "utf8").catch(() => "");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

for (const engine of FEDWORK_ENGINES) {
  test(
    `Batches on ${engine.packageName} complete exactly once across ${KILLS} SIGKILLed workers`,
    async () => {
      const namespace = createNamespace();
      const log = join(tmpdir(), `${namespace}.completions.jsonl`);
      const instance = engine.open(namespace, LEASE_MS);
      const workers: Worker[] = [];
      try {
        const app = createBatchApp(instance, log);
        const batches = [await enqueueBatch(app), await enqueueBatch(app)];
        for (let i = 0; i < WORKERS; i++) workers.push(startWorker(engine, namespace, log));
        await Promise.all(workers.map(waitStarted));
        for (let kill = 0; kill < KILLS; kill++) {
          // A fresh batch each round, so that the kills land among members.
          batches.push(await enqueueBatch(app));
          await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 800));
          const index = Math.floor(Math.random() * workers.length);
          workers[index].child.kill("SIGKILL");
          await within(workers[index].exited, "a killed worker to exit");
          workers[index] = startWorker(engine, namespace, log);
          await waitStarted(workers[index]);
        }
        let lines: CompletionLine[] = [];
        await waitUntil(async () => {
          lines = await completionLines(log);
          return batches.every((id) => lines.some((line) => line.batchId === id));
        }, {
          timeoutMs: 180_000,
          intervalMs: 250,
          what: () =>
            `every batch's completion task to run (${new Set(lines.map((l) => l.batchId)).size} ` +
            `of ${batches.length})`,
        });
        // Long enough for a killed worker's lease to run out twice: a
        // second completion task, if there were one, would run by then.
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2 + 500));
        lines = await completionLines(log);
        const failed = Array.from({ length: BATCH_MEMBERS }, (_, n) => n).filter(failsForGood);
        let reruns = 0;
        for (const batchId of batches) {
          const runs = lines.filter((line) => line.batchId === batchId);
          const taskIds = new Set(runs.map((line) => line.taskId));
          assertEquals(taskIds.size, 1, `batch ${batchId} had ${taskIds.size} completion tasks`);
          reruns += runs.length - 1;
          assertEquals(runs[0].total, BATCH_MEMBERS + FANNED_OUT);
          assertEquals(runs[0].failed, failed.length);
          assertEquals(runs[0].completed, BATCH_MEMBERS + FANNED_OUT - failed.length);
          const status = await app.federation.getBatchStatus(batchId);
          assertEquals(status?.state, "completed");
          assertEquals(status?.completionTaskId, runs[0].taskId);
        }
        // Measured numbers for the report; the assertions above decide.
        const memberRuns = (await readFile(`${log}.members`, "utf8")).split("\n")
          .filter((line) => line !== "");
        const members = new Set(memberRuns).size;
        assertEquals(members, batches.length * (BATCH_MEMBERS + FANNED_OUT));
        process.stdout.write(
          `batch-crash ${engine.name}: ${KILLS} kills, ${batches.length} batches, ` +
            `${batches.length} completion tasks, ${reruns} completion run(s) redelivered, ` +
            `${memberRuns.length} member runs for ${members} members ` +
            `(${memberRuns.length - members} run again)\n`,
        );
      } finally {
        for (const worker of workers) {
          if (worker.child.exitCode === null && worker.child.signalCode === null) {
            worker.child.kill("SIGKILL");
            await within(worker.exited, "a worker to exit").catch(() => {});
          }
        }
        await instance.close();
        await engine.cleanup(namespace);
        await rm(log, { force: true });
        await rm(`${log}.members`, { force: true });
      }
    },
  );
}
