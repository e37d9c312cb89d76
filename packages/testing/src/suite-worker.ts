// The test side of the multi-process suites: starts a worker script in a
// child process of the same runtime, collects the lines it prints, and waits
// for one of them or for its exit.  worker-process.ts is the other side.
// Internal to @fedwork/testing; imported only by the suites.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { childCommand, childEnvironment } from "./child-process.ts";
import { assertEquals } from "./test-runner.ts";
import { deferred, within } from "./wait.ts";

/** How a worker process ended. */
export interface SuiteWorkerExit {
  /** Its exit code, or `null` when a signal (or a failed start) ended it. */
  readonly code: number | null;
  /** The signal that ended it, `"spawn error"` when it never started, else `null`. */
  readonly signal: string | null;
  /** When it ended (`performance.now()`). */
  readonly at: number;
}

/** A worker script running in a child process. */
export interface SuiteWorker {
  /** Every complete line it has printed on standard output so far. */
  readonly lines: string[];
  /** Resolves once it has ended. */
  readonly exited: Promise<SuiteWorkerExit>;
  /** Whether it is still running. */
  readonly running: boolean;
  /**
   * What it printed, for an assertion's message: its standard output (the
   * last `outputLines` lines) and the end of its standard error.
   */
  output(): string;
  /**
   * Resolves with the first line, printed before or after the call, that
   * `pattern` matches; rejects when it exits first or after `timeoutMs`.
   */
  waitFor(pattern: RegExp, what: string, timeoutMs: number): Promise<string>;
  /** Closes its standard input (a worker started with `stdin: true` stops then). */
  closeStdin(): void;
  /**
   * Sends it a signal with `process.kill()`: `child.kill()` makes Deno's
   * `node:child_process` report the exit as a death by that signal, even
   * when the child caught it and exited with 0.
   * @returns When the signal was sent (`performance.now()`).
   */
  signal(signal: "SIGTERM" | "SIGINT"): number;
  /** Kills it with SIGKILL, if it still runs, and waits up to `timeoutMs` for its end. */
  kill(timeoutMs: number): Promise<void>;
}

/** Options of {@link startSuiteWorker}. */
export interface SuiteWorkerOptions {
  /** Gives it a standard input to close (`closeStdin()`); ignored input otherwise. */
  readonly stdin?: boolean;
  /** How many of its last lines `output()` shows; all by default. */
  readonly outputLines?: number;
  /** A name `output()` starts with, to tell workers apart. */
  readonly label?: string;
}

/**
 * Starts a worker script in a child process of the runtime running the test
 * (with the test's source conditions and environment).
 * @param script The worker script's URL.
 * @param args Its arguments.
 * @param options See {@link SuiteWorkerOptions}.
 * @returns The running worker.
 */
export function startSuiteWorker(
  script: URL,
  args: readonly string[],
  options: SuiteWorkerOptions = {},
): SuiteWorker {
  const command = childCommand(script, [...args]);
  const child: ChildProcess = spawn(command.command, command.args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let partial = "";
  let stderr = "";
  const exited = deferred<SuiteWorkerExit>();
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters) if (waiter.pattern.test(line)) waiter.resolve(line);
    }
  });
  child.stderr!.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-6000);
  });
  child.on("error", (error) => {
    stderr += `\nfailed to start: ${error}`;
    exited.resolve({ code: null, signal: "spawn error", at: performance.now() });
  });
  child.on("exit", (code, signal) => exited.resolve({ code, signal, at: performance.now() }));
  const output = () => {
    const shown = options.outputLines == null ? lines : lines.slice(-options.outputLines);
    const label = options.label == null ? "" : `${options.label} `;
    return `${label}stdout:\n${shown.join("\n")}\nstderr:\n${stderr}`;
  };
  return {
    lines,
    exited: exited.promise,
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    output,
    waitFor(pattern, what, timeoutMs) {
      const found = lines.find((line) => pattern.test(line));
      if (found !== undefined) return Promise.resolve(found);
      const line = deferred<string>();
      waiters.push({ pattern, resolve: line.resolve });
      return within(
        Promise.race([
          line.promise,
          exited.promise.then(({ code, signal }) => {
            throw new Error(
              `The worker exited (code ${code}, signal ${signal}) before ${what}; ${output()}`,
            );
          }),
        ]),
        () => `${what}; ${output()}`,
        timeoutMs,
      );
    },
    closeStdin() {
      child.stdin?.end();
    },
    signal(signal) {
      const at = performance.now();
      process.kill(child.pid!, signal);
      return at;
    },
    async kill(timeoutMs) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await within(exited.promise, () => `the worker to die; ${output()}`, timeoutMs)
          .catch(() => {});
      }
    },
  };
}

/**
 * Stops a worker started with `stdin: true` by closing its standard input,
 * and checks that it exits with 0; kills it when it does not stop within
 * `timeoutMs`.
 * @param worker The worker.
 * @param timeoutMs How long it may take to stop.
 * @throws {Error} When it does not stop in time or exits with another code.
 */
export async function stopByStdin(worker: SuiteWorker, timeoutMs: number): Promise<void> {
  worker.closeStdin();
  const exit = await within(
    worker.exited,
    () => `the worker to stop; ${worker.output()}`,
    timeoutMs,
  )
    .catch(async (error) => {
      await worker.kill(5_000);
      throw error;
    });
  assertEquals(exit.code, 0, `the worker's exit code; ${worker.output()}`);
}
