// The conformance tests of debounce and throttle on enqueue: two real web
// processes (flow-control-process.ts) take turns enqueueing one task on
// the backend's engines, and a real worker process runs it; the suite
// counts what ran and what was dropped as superseded.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import type { TaskEnqueueResult } from "@fedwork/core";
import { childCommand, childEnvironment } from "./child-process.ts";
import { createTestNamespace } from "./namespace.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { deferred, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const STEP_TIMEOUT_MS = 90_000;
// How long after the last enqueue a debounced task runs.  It bounds how
// long one round trip between the suite and a web process may take (an
// earlier payload would run otherwise), so it is generous.
const DEBOUNCE_DELAY_MS = 4_000;

/**
 * Options for {@link testDebounceAndThrottle}.
 * @since 0.4.0
 */
export interface DebounceConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module the processes import (so it must not register
   * tests), exporting `open(namespace)`, which returns the queue, the
   * key–value store (with `cas()`) and optionally the pub/sub of one
   * process, sharing their data per namespace, and optionally
   * `cleanup(namespace)`.  Its queue's lease should be short (seconds):
   * the crash test kills a worker.
   */
  readonly backendModule: string;
}

interface Child {
  readonly lines: string[];
  waitFor(pattern: RegExp, what: string, from?: number): Promise<string>;
  send(line: string): void;
  kill(): Promise<void>;
}

interface Payload {
  readonly from: string;
  readonly i: number;
}

function startChild(
  options: DebounceConformanceOptions,
  namespace: string,
  role: "web" | "worker",
): Child {
  const { command, args } = childCommand(new URL("./flow-control-process.ts", import.meta.url), [
    options.backendModule,
    namespace,
    role,
  ]);
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  let stderr = "";
  let exited = false;
  const died = deferred<void>();
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    lines.push(...parts);
    for (const waiter of waiters) waiter();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-6000);
  });
  child.on("exit", () => {
    exited = true;
    died.resolve();
    for (const waiter of waiters) waiter();
  });
  const output = () => `${role} stdout:\n${lines.join("\n")}\nstderr:\n${stderr}`;
  return {
    lines,
    async waitFor(pattern, what, from = 0) {
      let look = () => {};
      const found = new Promise<string>((resolve, reject) => {
        look = () => {
          const line = lines.slice(from).find((line) => pattern.test(line));
          if (line !== undefined) resolve(line);
          else if (exited) reject(new Error(`The ${role} process exited before ${what}.`));
        };
      });
      waiters.add(look);
      look();
      try {
        return await within(found, () => `${what}; ${output()}`, STEP_TIMEOUT_MS);
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${output()}`);
      } finally {
        waiters.delete(look);
      }
    },
    send(line) {
      child.stdin!.write(`${line}\n`);
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await within(died.promise, "the process to die", 30_000).catch(() => {});
      }
    },
  };
}

/** Sends `ENQ` to a web process and returns its result. */
async function enqueue(
  web: Child,
  options: Record<string, unknown>,
  payload: Payload,
): Promise<TaskEnqueueResult> {
  const from = web.lines.length;
  web.send(`ENQ ${JSON.stringify(options)} ${JSON.stringify(payload)}`);
  const line = await web.waitFor(/^(RESULT|ERROR) /, "the enqueue's result", from);
  if (line.startsWith("ERROR ")) throw new Error(`The enqueue failed: ${line}`);
  return JSON.parse(line.slice("RESULT ".length));
}

/** The payloads a worker ran, in order. */
function ran(worker: Child): { id: string; payload: Payload }[] {
  return worker.lines.filter((line) => line.startsWith("RAN ")).map((line) => {
    const [, id, json] = /^RAN (\S+) (.*)$/.exec(line)!;
    return { id, payload: JSON.parse(json) };
  });
}

function dropped(worker: Child): string[] {
  return worker.lines.filter((line) => line.startsWith("DROPPED "));
}

/** Waits until `worker` ran or dropped `count` messages in all. */
async function settled(workers: readonly Child[], count: number): Promise<void> {
  const all = deferred<void>();
  const check = () => {
    const seen = workers.reduce((sum, w) => sum + ran(w).length + dropped(w).length, 0);
    if (seen >= count) all.resolve();
  };
  const timer = setInterval(check, 50);
  try {
    check();
    await within(
      all.promise,
      () => `${count} outcomes; ${workers.map((w) => w.lines.join("\n")).join("\n---\n")}`,
      STEP_TIMEOUT_MS,
    );
  } finally {
    clearInterval(timer);
  }
}

async function withProcesses(
  options: DebounceConformanceOptions,
  body: (start: (role: "web" | "worker") => Promise<Child>) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  const children: Child[] = [];
  try {
    await body(async (role) => {
      const child = startChild(options, namespace, role);
      children.push(child);
      if (role === "worker") await child.waitFor(/^READY$/, "the worker to start");
      return child;
    });
  } finally {
    await Promise.all(children.map((child) => child.kill()));
    const imported = await import(options.backendModule) as {
      cleanup?: (namespace: string) => Promise<void>;
    };
    await imported.cleanup?.(namespace);
  }
}

/**
 * Registers the debounce and throttle tests of a backend, across real
 * processes on the runtime running the tests: ten debounced enqueues,
 * taken in turns by two web processes, run once with the last payload and
 * the nine others are dropped as superseded; `maxWait` makes a long burst
 * run while it goes on, and its end runs the last payload; a throttle key
 * lets the first enqueue through and reports the others as `throttled`
 * with the end of the period; and a worker killed while the debounced task
 * waits loses nothing: another worker runs it, once.
 * @param options The backend's name and module.
 * @since 0.4.0
 */
export function testDebounceAndThrottle(options: DebounceConformanceOptions): void {
  const debounce = (extra: Record<string, unknown> = {}) => ({
    debounce: { key: "post-1", delay: { milliseconds: DEBOUNCE_DELAY_MS }, ...extra },
  });

  test(`${options.name}: ten debounced enqueues from two processes run once, with the last payload`, () =>
    withProcesses(options, async (start) => {
      const [a, b, worker] = [await start("web"), await start("web"), await start("worker")];
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const result = await enqueue(i % 2 === 0 ? a : b, debounce(), { from: "web", i });
        assertEquals(result.status, "debounced");
        assert(result.status === "debounced" && result.debounceKey === "post-1");
        ids.push(result.messageId);
      }
      await settled([worker], 10);
      assertEquals(ran(worker), [{ id: ids[9], payload: { from: "web", i: 9 } }]);
      assertEquals(dropped(worker).length, 9);
      assert(dropped(worker).every((line) => line.includes("superseded")), dropped(worker)[0]);
    }));

  test(`${options.name}: maxWait runs a long debounce burst while it goes on`, () =>
    withProcesses(options, async (start) => {
      const [a, b, worker] = [await start("web"), await start("web"), await start("worker")];
      const option = debounce({ maxWait: { milliseconds: 1_500 } });
      // Far more often than the delay: without maxWait nothing would run
      // until the burst ends.
      let i = 0;
      let during: number | undefined;
      while (i < 400) {
        await enqueue(i % 2 === 0 ? a : b, option, { from: "web", i });
        i++;
        if (ran(worker).length > 0) {
          during ??= i;
          if (i >= during + 2) break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert(during != null, "nothing ran during a burst of 400 enqueues");
      await settled([worker], i);
      const runs = ran(worker);
      assert(runs.length >= 2, `runs: ${JSON.stringify(runs)}`);
      assert(runs[0].payload.i < during, `the first run: ${JSON.stringify(runs[0])}`);
      assertEquals(runs.at(-1)!.payload, { from: "web", i: i - 1 });
      assertEquals(runs.length + dropped(worker).length, i);
    }));

  test(`${options.name}: throttle lets the first enqueue through and reports the others`, () =>
    withProcesses(options, async (start) => {
      const [a, b, worker] = [await start("web"), await start("web"), await start("worker")];
      const throttle = { throttle: { key: "post-1", period: { hours: 1 } } };
      const before = Date.now();
      const results: TaskEnqueueResult[] = [];
      for (let i = 0; i < 6; i++) {
        results.push(await enqueue(i % 2 === 0 ? a : b, throttle, { from: "web", i }));
      }
      assertEquals(results[0].status, "enqueued");
      for (const result of results.slice(1)) {
        assert(result.status === "throttled", JSON.stringify(result));
        assertEquals(result.throttleKey, "post-1");
        const until = new Date(result.until).getTime();
        assert(until >= before + 3_600_000 && until <= Date.now() + 3_600_000, String(until));
      }
      // Another key is throttled on its own; once it ran, so had anything
      // the first key let through.
      const other = { throttle: { key: "post-2", period: { milliseconds: 300 } } };
      assertEquals((await enqueue(b, other, { from: "web", i: 100 })).status, "enqueued");
      await settled([worker], 2);
      const first = await enqueue(a, other, { from: "web", i: 101 });
      if (first.status === "throttled") {
        // The period ends: the next enqueue after it goes through.
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, new Date(first.until).getTime() - Date.now()) + 50)
        );
        assertEquals((await enqueue(a, other, { from: "web", i: 102 })).status, "enqueued");
      }
      await settled([worker], 3);
      assertEquals(ran(worker).map((run) => run.payload.i).sort((x, y) => x - y).slice(0, 2), [
        0,
        100,
      ]);
      assertEquals(ran(worker).length, 3);
      assertEquals(dropped(worker), []);
    }));

  test(`${options.name}: a worker killed while a debounced task waits loses nothing`, () =>
    withProcesses(options, async (start) => {
      const [a, b, first] = [await start("web"), await start("web"), await start("worker")];
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const result = await enqueue(i % 2 === 0 ? a : b, debounce(), { from: "web", i });
        assert(result.status === "debounced");
        ids.push(result.messageId);
      }
      // Both ends die: the worker that would run it, and the web process
      // that enqueued last.
      await Promise.all([first.kill(), b.kill()]);
      const second = await start("worker");
      await settled([first, second], 10);
      assertEquals([...ran(first), ...ran(second)], [{
        id: ids[9],
        payload: { from: "web", i: 9 },
      }]);
    }));
}
