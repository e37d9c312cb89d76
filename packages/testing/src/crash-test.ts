import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { EVENT_TIMEOUT_MS, type QueueTestRun } from "./queue-harness.ts";
import { createDeferred, withTimeout } from "./wait.ts";

/** The line prefix the crash worker prints from inside its handler. */
export const HANDLING_PREFIX = "HANDLING ";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;

/** The command that runs the crash worker on the runtime running this code. */
function crashWorkerCommand(args: string[]): { command: string; args: string[] } {
  // Beside this module: crash-worker.ts in the sources, crash-worker.js in
  // the published build.
  const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  const workerUrl = new URL(`./crash-worker${extension}`, import.meta.url);
  if ("Deno" in globalThis) {
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
    // Deno can also run the worker straight from a remote (e.g. JSR) URL.
    const worker = workerUrl.protocol === "file:" ? fileURLToPath(workerUrl) : workerUrl.href;
    return { command: deno.execPath(), args: ["run", "-A", worker, ...args] };
  }
  // Node.js and Bun both run a TypeScript file given as the first argument.
  return { command: process.execPath, args: [fileURLToPath(workerUrl), ...args] };
}

function childEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) env[key] = value;
  }
  // node:test sets this for the test files it spawns; a child that inherits
  // it reports to the parent's test runner instead of running normally.
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/**
 * Enqueues `message`, lets a child process start handling it, SIGKILLs the
 * child mid-handler and listens with a new instance in this process.
 * @returns The message as delivered again.
 */
export async function runCrashTest(
  run: QueueTestRun,
  factoryModule: string,
  message: unknown,
): Promise<unknown> {
  const producer = await run.createQueue();
  await producer.enqueue(message);
  const { command, args } = crashWorkerCommand([
    factoryModule,
    run.namespace,
    String(run.leaseMs),
  ]);
  // The child runs from the same working directory as the test, so Deno
  // finds the same deno.json (import map, nodeModulesDir) the test used.
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const handling = createDeferred<string>();
  const exited = createDeferred<string>();
  const closed = createDeferred();
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    stdout += chunk;
    const line = stdout.split("\n").find((l) => l.startsWith(HANDLING_PREFIX));
    if (line !== undefined) handling.resolve(line.slice(HANDLING_PREFIX.length));
  });
  child.stderr!.on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.on("error", (error) => exited.resolve(`failed to start: ${error}`));
  child.on("exit", (code, signal) => exited.resolve(`exited (code ${code}, signal ${signal})`));
  child.on("close", () => closed.resolve());
  try {
    const outcome = await withTimeout(
      Promise.race([
        handling.promise.then((json) => ({ json })),
        exited.promise.then((reason) => ({ reason })),
      ]),
      CHILD_START_TIMEOUT_MS,
      () => `the crash worker to start handling the message; stderr:\n${stderr}`,
    );
    if ("reason" in outcome) {
      // Let the last of its output arrive before quoting it.
      await withTimeout(closed.promise, 5_000, "the crash worker's output").catch(() => {});
      throw new Error(
        `The crash worker ${outcome.reason} before handling the message.\n` +
          `Command: ${command} ${args.join(" ")}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
      );
    }
    child.kill("SIGKILL");
    await withTimeout(exited.promise, EVENT_TIMEOUT_MS, "the crash worker to exit");
    const consumer = await run.createQueue();
    const received = createDeferred<unknown>();
    run.listen(consumer, (redelivered) => received.resolve(redelivered));
    return await withTimeout(
      received.promise,
      run.leaseMs * 5 + 20_000,
      "the message of the killed worker to be delivered again",
    );
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await withTimeout(exited.promise, EVENT_TIMEOUT_MS, "the crash worker to exit")
        .catch(() => {});
    }
  }
}
