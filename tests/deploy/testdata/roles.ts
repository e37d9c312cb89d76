// The example's roles and the Fedify peer as child processes of the
// runtime running the test (Deno, Node.js or Bun), so that each runtime
// runs the whole set-up on itself.
import { spawn } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { within } from "@fedify/fixture";
import { ROOT } from "./page.ts";

/** The example's entry point. */
export const MAIN: string = join(ROOT, "examples", "microblog", "src", "main.ts");

/** A started child process and everything it printed. */
export interface Role {
  readonly name: string;
  /** Sends it a signal. */
  kill(signal: "SIGTERM" | "SIGKILL"): void;
  /** Whether it has not exited yet. */
  running(): boolean;
  output(): string;
  /** Resolves with its exit code and signal, whenever it exits. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
}

interface Spawned {
  kill(signal: "SIGTERM" | "SIGKILL"): void;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
}

interface DenoChild {
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly status: Promise<{ code: number; signal: string | null }>;
  kill(signal: string): void;
}

interface DenoApi {
  execPath(): string;
  Command: new (command: string, options: {
    args: string[];
    env: Record<string, string>;
    clearEnv: boolean;
    stdin: "null";
    stdout: "piped";
    stderr: "piped";
  }) => { spawn(): DenoChild };
}

function spawnOn(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  onOutput: (text: string) => void,
): Spawned {
  const deno = (globalThis as { Deno?: DenoApi }).Deno;
  if (deno != null) {
    // Deno.Command rather than node:child_process, whose "exit" event on
    // Deno names the signal it was sent (SIGTERM) even when the child
    // caught it and exited with code 0.
    const child = new deno.Command(deno.execPath(), {
      args: ["run", "-A", script, ...args],
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const read = async (stream: ReadableStream<Uint8Array>) => {
      const decoder = new TextDecoder();
      const reader = stream.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        onOutput(decoder.decode(read.value, { stream: true }));
      }
    };
    const streams = Promise.all([read(child.stdout), read(child.stderr)]);
    return {
      kill: (signal) => child.kill(signal),
      exited: (async () => {
        const status = await child.status;
        await streams;
        return { code: status.signal == null ? status.code : null, signal: status.signal };
      })(),
    };
  }
  // Node.js and Bun: the source condition comes from NODE_OPTIONS or
  // BUN_OPTIONS, which scripts/test.ts sets and children inherit.
  const child = spawn(process.execPath, [script, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => onOutput(String(chunk)));
  child.stderr!.on("data", (chunk) => onOutput(String(chunk)));
  return {
    kill: (signal) => child.kill(signal),
    exited: new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
    }),
  };
}

/**
 * Starts `script` on this runtime and resolves once its output matches
 * `ready`.
 * @param name For messages.
 * @param script The script's path.
 * @param args Its arguments.
 * @param env Variables added to this process's environment.
 * @param ready What it prints once it is ready.
 * @returns The running process.
 */
export async function startRole(
  name: string,
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  ready: RegExp,
): Promise<Role> {
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) environment[key] = value;
  }
  // node:test's marker would make a child report to this runner.
  delete environment.NODE_TEST_CONTEXT;
  let output = "";
  let isReady: (() => void) | undefined;
  const child = spawnOn(script, args, { ...environment, ...env }, (text) => {
    output += text;
    if (ready.test(output)) isReady?.();
  });
  let done = false;
  const exited = child.exited.then((exit) => {
    done = true;
    return exit;
  });
  const role: Role = {
    name,
    kill: (signal) => child.kill(signal),
    running: () => !done,
    output: () => output,
    exited,
  };
  await within(
    new Promise<void>((resolve, reject) => {
      isReady = resolve;
      if (ready.test(output)) resolve();
      exited.then(({ code, signal }) =>
        reject(new Error(`${name} exited (${code ?? signal}):\n${output}`))
      );
    }),
    () => `${name} to start; it printed:\n${output}`,
    // Deno compiles the example first; a loaded machine may take a while.
    120_000,
  );
  return role;
}
