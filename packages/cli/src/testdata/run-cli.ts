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
  /** Resolves once the standard output has a line containing `text`. */
  stdoutLine(text: string): Promise<void>;
  /** Closes the reading end of its standard output, as `| head -n 1` does. */
  closeStdout(): Promise<void>;
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
export function startFedwork(
  args: readonly string[],
  env: Record<string, string> = {},
): RunningCli {
  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) childEnv[key] = value;
  }
  // node:test sets this for its own children; the CLI is not one.
  delete childEnv.NODE_TEST_CONTEXT;
  let stdout = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  const changed = () => waiters.splice(0).forEach((wake) => wake());
  const child = spawnChild(args, { ...childEnv, NO_COLOR: "1", ...env }, {
    stdout: (chunk) => {
      stdout += chunk;
      changed();
    },
    stderr: (chunk) => {
      stderr += chunk;
      changed();
    },
  });
  let done = false;
  const exited = child.exited.finally(() => {
    done = true;
    changed();
  }).then(({ code, signal }) => ({ code, signal, stdout, stderr }));
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
    stdoutLine: (text) => until(() => stdout.includes(text), `printing ${text}`),
    closeStdout: () => child.closeStdout(),
    kill: (signal) => child.kill(signal),
    exited,
  };
}

/**
 * Runs `fedwork` with `args` to its end.
 * @param args The command line.
 * @param env Variables added to this process's environment.
 * @returns What it printed and its exit code.
 */
export function runFedwork(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  return startFedwork(args, env).exited;
}

interface SpawnedChild {
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  kill(signal: NodeJS.Signals): void;
  closeStdout(): Promise<void>;
}

interface DenoCommandApi {
  execPath(): string;
  Command: new (command: string, options: {
    args: string[];
    cwd: string;
    env: Record<string, string>;
    clearEnv: boolean;
    stdin: "null";
    stdout: "piped";
    stderr: "piped";
  }) => {
    spawn(): {
      stdout: ReadableStream<Uint8Array>;
      stderr: ReadableStream<Uint8Array>;
      status: Promise<{ code: number; signal: string | null }>;
      kill(signal: string): void;
    };
  };
}

/**
 * Starts the program: with Deno.Command on Deno, whose node:child_process
 * reports a child it sent a signal to as killed by it even when the child
 * handled the signal and exited 0; with node:child_process elsewhere.
 */
function spawnChild(
  args: readonly string[],
  env: Record<string, string>,
  on: { stdout(chunk: string): void; stderr(chunk: string): void },
): SpawnedChild {
  const deno = (globalThis as { Deno?: DenoCommandApi }).Deno;
  if (deno != null) {
    const child = new deno.Command(deno.execPath(), {
      args: ["run", "-A", BIN, ...args],
      cwd: CLI_CWD,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const pump = async (
      reader: ReadableStreamDefaultReader<Uint8Array>,
      write: (chunk: string) => void,
    ) => {
      const decoder = new TextDecoder();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        write(decoder.decode(read.value, { stream: true }));
      }
    };
    const stdout = child.stdout.getReader();
    const pumped = Promise.all([
      pump(stdout, on.stdout),
      pump(child.stderr.getReader(), on.stderr),
    ]);
    return {
      closeStdout: () => stdout.cancel(),
      exited: Promise.all([child.status, pumped]).then(([status]) => ({
        code: status.signal == null ? status.code : null,
        signal: status.signal,
      })),
      kill(signal) {
        try {
          child.kill(signal);
        } catch {
          // It has exited already (Deno throws where Node.js does nothing).
        }
      },
    };
  }
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: CLI_CWD,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.setEncoding("utf8").on("data", on.stdout);
  child.stderr.setEncoding("utf8").on("data", on.stderr);
  return {
    exited: new Promise((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => resolve({ code, signal }));
    }),
    kill: (signal) => void child.kill(signal),
    closeStdout() {
      child.stdout.destroy();
      return Promise.resolve();
    },
  };
}
