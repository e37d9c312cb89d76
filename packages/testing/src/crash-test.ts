import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { childCommand, childEnvironment } from "./child-process.ts";
import { EVENT_TIMEOUT_MS, type QueueTestRun } from "./queue-harness.ts";
import { deferred, within } from "./wait.ts";

/** The line prefix the crash worker prints from inside its handler. */
export const HANDLING_PREFIX = "HANDLING ";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;

/** The command that runs the crash worker on the runtime running this code. */
function crashWorkerCommand(args: string[]): { command: string; args: string[] } {
  return childCommand(new URL("./crash-worker.ts", import.meta.url), args);
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
  const handling = deferred<string>();
  const exited = deferred<string>();
  const closed = deferred();
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
    const outcome = await within(
      Promise.race([
        handling.promise.then((json) => ({ json })),
        exited.promise.then((reason) => ({ reason })),
      ]),
      () => `the crash worker to start handling the message; stderr:\n${stderr}`,
      CHILD_START_TIMEOUT_MS,
    );
    if ("reason" in outcome) {
      // Let the last of its output arrive before quoting it.
      await within(closed.promise, "the crash worker's output", 5_000).catch(() => {});
      throw new Error(
        `The crash worker ${outcome.reason} before handling the message.\n` +
          `Command: ${command} ${args.join(" ")}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
      );
    }
    child.kill("SIGKILL");
    await within(exited.promise, "the crash worker to exit", EVENT_TIMEOUT_MS);
    const consumer = await run.createQueue();
    const received = deferred<unknown>();
    run.listen(consumer, (redelivered) => received.resolve(redelivered));
    return await within(
      received.promise,
      "the message of the killed worker to be delivered again",
      run.leaseMs * 5 + 20_000,
    );
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await within(exited.promise, "the crash worker to exit", EVENT_TIMEOUT_MS)
        .catch(() => {});
    }
  }
}
