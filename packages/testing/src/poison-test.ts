import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { childCommand, childEnvironment } from "./child-process.ts";
import type { MessageQueue } from "@fedwork/core";
import { EVENT_TIMEOUT_MS } from "./queue-harness.ts";
import { assertEquals } from "./test-runner.ts";
import { deferred, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
// The old-generation heap of a child that is to run out of memory, in MiB:
// room for the runtime, the engine's client and the queue, and little more.
const OOM_HEAP_MIB = 96;

/**
 * Options of {@link runPoisonTest}.
 * @since 0.4.0
 */
export interface PoisonTestOptions {
  /**
   * The hand-out limit the child workers apply, as Fedwork's
   * `maxDeliveries` does: a poison message handed out more than this many
   * times is acknowledged unrun.  2 by default (three child processes).
   */
  readonly maxDeliveries?: number;
  /**
   * How the poison message kills its worker: `"sigkill"` (the default), or
   * `"oom"`, allocating until the runtime runs out of memory under a small
   * heap limit (`--max-old-space-size` on Node.js and Deno; Bun has no such
   * flag and is sent SIGKILL instead).
   */
  readonly kill?: "sigkill" | "oom";
  /**
   * Whether the normal message shares the poison message's ordering key,
   * so that it can only run once the poison message is acknowledged.
   * `true` by default.
   */
  readonly orderingKey?: boolean;
}

/**
 * What {@link runPoisonTest} saw.
 * @since 0.4.0
 */
export interface PoisonTestReport {
  /** The delivery counts the poison message was handed out with, in order. */
  readonly deliveryCounts: readonly (number | undefined)[];
  /** How many child processes ran. */
  readonly children: number;
}

/**
 * The test's namespace, lease and queues, as {@link runPoisonTest} needs
 * them; `testMessageQueue()`'s own test runs are such objects.
 * @since 0.4.0
 */
export interface PoisonTestRun {
  /** The namespace the backend's factory module isolates the test under. */
  readonly namespace: string;
  /** The lease the children's queues get, in milliseconds. */
  readonly leaseMs: number;
  /**
   * Creates a queue instance in the namespace, disposed of by the caller
   * when the test ends.
   */
  createQueue(): Promise<MessageQueue>;
}

interface ChildRun {
  /** The poison message's delivery count, when this child was handed it. */
  poisonCount?: number;
  quarantined: boolean;
  handledNormal: boolean;
  exit: string;
}

function poisonWorkerCommand(
  args: string[],
  kill: "sigkill" | "oom",
): { command: string; args: string[] } {
  const base = childCommand(new URL("./poison-worker.ts", import.meta.url), args);
  if (kill !== "oom") return base;
  if ("Deno" in globalThis) {
    // deno run --v8-flags=... <script> ...
    return {
      command: base.command,
      args: [
        base.args[0],
        `--v8-flags=--max-old-space-size=${OOM_HEAP_MIB}`,
        ...base.args.slice(1),
      ],
    };
  }
  return { command: base.command, args: [`--max-old-space-size=${OOM_HEAP_MIB}`, ...base.args] };
}

/**
 * The poison-message test: enqueues a message whose handler kills the
 * worker process handling it, and a normal message after it (with the same
 * ordering key by default).  Each worker is a REAL child process on the
 * runtime running the test; while the poison message is within the limit
 * it dies handling it (SIGKILL or out of memory), so the test starts
 * another, until the queue hands it out with a `deliveryCount` over the
 * limit and the child acknowledges it unrun, as Fedwork's processing layer
 * does; the same child must then handle the normal message.  Checks that
 * the count climbed 1, 2, …, `maxDeliveries + 1`, counted at claim time
 * and kept across deaths.  Needs a durable queue that counts hand-outs.
 * @param run The test's namespace, lease and queues.
 * @param factoryModule The backend's factory module URL.
 * @param options The limit, how the worker dies and the ordering key.
 * @returns The counts seen and how many children ran.
 * @throws {AssertionError} When the count does not climb as it should, or
 *         the normal message is not handled after the quarantine.
 * @since 0.4.0
 */
export async function runPoisonTest(
  run: PoisonTestRun,
  factoryModule: string,
  options: PoisonTestOptions = {},
): Promise<PoisonTestReport> {
  const maxDeliveries = options.maxDeliveries ?? 2;
  // Bun has no heap limit flag: an allocating child would take the machine.
  const kill = options.kill === "oom" && !("Bun" in globalThis) ? "oom" : "sigkill";
  const queueOptions = options.orderingKey === false ? {} : { orderingKey: run.namespace };
  const producer = await run.createQueue();
  await producer.enqueue({ kind: "poison", id: run.namespace }, queueOptions);
  await producer.enqueue({ kind: "normal", id: run.namespace }, queueOptions);
  const counts: (number | undefined)[] = [];
  const runs: ChildRun[] = [];
  // One child per hand-out within the limit, one more for the quarantine,
  // and a few for a claim that a dying child made of the normal message.
  for (let child = 0; child < maxDeliveries + 4; child++) {
    const result = await runChild(run, factoryModule, maxDeliveries, kill);
    runs.push(result);
    if (result.poisonCount !== undefined || result.quarantined) counts.push(result.poisonCount);
    if (result.handledNormal) break;
  }
  const expected = Array.from({ length: maxDeliveries + 1 }, (_, i) => i + 1);
  assertEquals(
    counts,
    expected,
    `The poison message's delivery counts should climb 1..${maxDeliveries + 1}; children: ` +
      JSON.stringify(runs),
  );
  const last = runs.at(-1)!;
  assertEquals(
    { quarantined: last.quarantined, handledNormal: last.handledNormal },
    { quarantined: true, handledNormal: true },
    `The last child should quarantine the poison message and handle the normal one; children: ` +
      JSON.stringify(runs),
  );
  return { deliveryCounts: counts, children: runs.length };
}

/** Runs one child worker until it dies or has handled the normal message. */
async function runChild(
  run: PoisonTestRun,
  factoryModule: string,
  maxDeliveries: number,
  kill: "sigkill" | "oom",
): Promise<ChildRun> {
  const { command, args } = poisonWorkerCommand([
    factoryModule,
    run.namespace,
    String(run.leaseMs),
    String(maxDeliveries),
    kill,
  ], kill);
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const result: ChildRun = { quarantined: false, handledNormal: false, exit: "" };
  let stdout = "";
  let stderr = "";
  const handledNormal = deferred();
  const exited = deferred<string>();
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    stdout += chunk;
    const lines = stdout.split("\n");
    stdout = lines.pop()!;
    for (const line of lines) {
      const delivery = /^DELIVERY poison (\S+)$/.exec(line);
      if (delivery != null) {
        result.poisonCount = delivery[1] === "none" ? undefined : Number(delivery[1]);
      }
      if (line.startsWith("QUARANTINED ")) result.quarantined = true;
      if (line === "HANDLED normal") {
        result.handledNormal = true;
        handledNormal.resolve();
      }
    }
  });
  child.stderr!.on("data", (chunk: string) => {
    // Only the tail: an out-of-memory report can be long.
    stderr = (stderr + chunk).slice(-4000);
  });
  child.on("error", (error) => exited.resolve(`failed to start: ${error}`));
  child.on("exit", (code, signal) => exited.resolve(`exited (code ${code}, signal ${signal})`));
  try {
    // A killed worker's message comes back after its lease: the next child
    // waits that long, and a child that claims nothing meanwhile polls.
    const outcome = await within(
      Promise.race([
        handledNormal.promise.then(() => "handled"),
        exited.promise,
      ]),
      () => `the poison worker to die or handle the normal message; stderr:\n${stderr}`,
      CHILD_START_TIMEOUT_MS + run.leaseMs * 5,
    );
    result.exit = outcome;
    if (outcome !== "handled" && result.poisonCount === undefined && !result.quarantined) {
      throw new Error(
        `The poison worker ${outcome} before it was handed the poison message.\n` +
          `Command: ${command} ${args.join(" ")}\nstderr:\n${stderr}`,
      );
    }
    return result;
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await within(exited.promise, "the poison worker to exit", EVENT_TIMEOUT_MS)
        .catch(() => {});
    }
  }
}
