// Running the `fedwork` program in a child process on the runtime that runs
// the tests (deno run -A, node, bun), as an operator would.
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { deferred } from "@fedify/fixture";

const BIN = fileURLToPath(new URL("../bin.ts", import.meta.url));
/** The directory `--app` paths in the tests are relative to. */
export const CLI_CWD = fileURLToPath(new URL("..", import.meta.url));

/** What a finished run printed and how it exited. */
export interface CliRun {
  readonly code: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A running `fedwork` process. */
export interface RunningCli {
  /** Resolves once the standard error has a line containing `text`. */
  stderrLine(text: string): Promise<void>;
  /** Resolves once the standard output has `count` lines. */
  stdoutLines(count: number): Promise<string[]>;
  /** Sends a signal. */
  kill(signal: NodeJS.Signals): void;
  /** Resolves when it exits. */
  readonly exited: Promise<CliRun>;
}

/**
 * Starts `fedwork` with `args`.
 * @param args The command line.
 * @param env Variables added to this process's environment.
 * @returns The process.
 */
export function startFedwork(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const command = deno == null ? process.execPath : deno.execPath();
  const argv = deno == null ? [BIN, ...args] : ["run", "-A", BIN, ...args];
  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) childEnv[key] = value;
  }
  // node:test sets this for its own children; the CLI is not one.
  delete childEnv.NODE_TEST_CONTEXT;
  const child = spawn(command, argv, {
    cwd: CLI_CWD,
    env: { ...childEnv, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  const changed = () => waiters.splice(0).forEach((wake) => wake());
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    changed();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    changed();
  });
  const exited = new Promise<CliRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      resolve({ code, signal, stdout, stderr });
      changed();
    });
  });
  let done = false;
  exited.finally(() => (done = true)).catch(() => {});
  const until = async (ready: () => boolean, what: string) => {
    while (!ready()) {
      if (done) throw new Error(`fedwork exited before ${what}:\n${stdout}\n${stderr}`);
      const wake = deferred();
      waiters.push(() => wake.resolve());
      await wake.promise;
    }
  };
  return {
    stderrLine: (text) => until(() => stderr.includes(text), `printing ${text}`),
    async stdoutLines(count) {
      const lines = () => stdout.split("\n").filter((line) => line !== "");
      await until(() => lines().length >= count, `printing ${count} lines`);
      return lines();
    },
    kill: (signal) => void child.kill(signal),
    exited,
  };
}

/**
 * Runs `fedwork` with `args` to its end.
 * @param args The command line.
 * @param env Variables added to this process's environment.
 * @returns What it printed and its exit code.
 */
export function runFedwork(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return startFedwork(args, env).exited;
}
