// Runs a script of this package in a child process on the runtime running
// the caller, and follows the lines it prints: for the tests and the
// benchmark that need two real processes on one database file.
import { spawn } from "node:child_process";
import process from "node:process";

/** A running child process that prints lines. */
export interface LineChild {
  /** Resolves with the first line that starts with `prefix` (after `from`). */
  line(prefix: string, from?: number): Promise<string>;
  /** The lines printed so far. */
  readonly lines: readonly string[];
  /** Closes its stdin (the scripts stop then) and resolves with its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `script` with `args` on this runtime (Deno with `run -A`).
 * @param script The script's path.
 * @param args Its arguments.
 * @returns The child.
 */
export function startLineChild(script: string, args: string[]): LineChild {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const command = deno == null ? process.execPath : deno.execPath();
  const env = { ...process.env };
  // node:test's variable would make the child report to the parent's runner.
  delete env.NODE_TEST_CONTEXT;
  // The parent's flags (`-C fedwork-source` when run by hand) go along.
  const runtimeArgs = deno == null ? [...process.execArgv, script] : ["run", "-A", script];
  const child = spawn(command, [...runtimeArgs, ...args], {
    cwd: process.cwd(),
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    partial += chunk;
    const parts = partial.split("\n");
    partial = parts.pop()!;
    lines.push(...parts);
    for (const waiter of [...waiters]) waiter();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.on("error", () => resolve(exitCode = null));
    child.on("exit", (code) => {
      resolve(exitCode = code);
      for (const waiter of [...waiters]) waiter();
    });
  });
  return {
    lines,
    line(prefix: string, from = 0): Promise<string> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.slice(from).find((line) => line.startsWith(prefix));
          if (found != null) {
            waiters.delete(check);
            resolve(found);
          } else if (exitCode !== undefined) {
            waiters.delete(check);
            reject(
              new Error(`The child exited (${exitCode}) before printing ${prefix}:\n${stderr}`),
            );
          }
        };
        waiters.add(check);
        check();
      });
    },
    stop(): Promise<number | null> {
      child.stdin.end();
      return exited;
    },
  };
}
