import { type ChildProcess, spawn } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { childCommand, childEnvironment } from "./child-process.ts";
import { HANDLING_PREFIX } from "./crash-test.ts";
import { EVENT_TIMEOUT_MS, type QueueTestRun } from "./queue-harness.ts";
import { assertEquals, fail } from "./test-runner.ts";
import { deferred, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;

/**
 * The lease-owner test: a worker in a child process takes a message and
 * is frozen (SIGSTOP) until its lease runs out and a second worker, in
 * this process, has been handed the message; then the first one is thawed,
 * finishes its handler and acknowledges.  That acknowledgement must not
 * delete the message the second worker holds: it is still queued, and
 * when the second worker's handler fails, it is handed out again.
 */
export async function runStaleAcknowledgementTest(
  run: QueueTestRun,
  factoryModule: string,
): Promise<void> {
  const message = { kind: "stale-ack", id: run.namespace };
  const producer = await run.createQueue();
  await producer.enqueue(message);
  // The child finishes its handler once this file exists.
  const finishFile = join(tmpdir(), `${run.namespace}.finish`);
  const { command, args } = childCommand(new URL("./stale-ack-worker.ts", import.meta.url), [
    factoryModule,
    run.namespace,
    String(run.leaseMs),
    finishFile,
  ]);
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const handling = deferred<string>();
  const stopped = deferred();
  const exited = deferred<string>();
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    stdout += chunk;
    const lines = stdout.split("\n");
    const line = lines.find((l) => l.startsWith(HANDLING_PREFIX));
    if (line !== undefined) handling.resolve(line.slice(HANDLING_PREFIX.length));
    if (lines.includes("STOPPED")) stopped.resolve();
  });
  child.stderr!.on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.on("error", (error) => exited.resolve(`failed to start: ${error}`));
  child.on("exit", (code, signal) => exited.resolve(`exited (code ${code}, signal ${signal})`));
  const output = () => `\nstdout:\n${stdout}\nstderr:\n${stderr}`;
  // Lets the second worker's handler fail; also on the way out, so that a
  // failed test does not leave it running.
  const fail2 = deferred();
  try {
    const outcome = await within(
      Promise.race([
        handling.promise.then((json) => ({ json })),
        exited.promise.then((reason) => ({ reason })),
      ]),
      () => `the first worker to start handling the message${output()}`,
      CHILD_START_TIMEOUT_MS,
    );
    if ("reason" in outcome) fail(`The first worker ${outcome.reason} too early.${output()}`);
    // Frozen, the first worker renews nothing: its lease runs out.  Sent by
    // pid: Deno's ChildProcess.kill() refuses a second signal (SIGCONT).
    process.kill(child.pid!, "SIGSTOP");
    const second = await run.createQueue();
    const taken = deferred<unknown>();
    const again = deferred<unknown>();
    let deliveries = 0;
    run.listen(second, async (received) => {
      if (++deliveries > 1) return again.resolve(received);
      taken.resolve(received);
      await fail2.promise;
      throw new Error("Thrown on purpose by the conformance suite (the second worker fails).");
    });
    assertEquals(
      await within(
        taken.promise,
        "the second worker to be handed the message after the first one's lease ran out",
        run.leaseMs * 5 + 20_000,
      ),
      message,
    );
    process.kill(child.pid!, "SIGCONT");
    await writeFile(finishFile, "");
    await within(
      Promise.race([stopped.promise, exited.promise]),
      () => `the first worker to acknowledge and stop${output()}`,
      EVENT_TIMEOUT_MS,
    );
    if (!stdout.split("\n").includes("STOPPED")) {
      fail(`The first worker did not stop cleanly.${output()}`);
    }
    const depth = await producer.getDepth?.();
    if (depth != null) {
      assertEquals(
        depth.queued,
        1,
        "The acknowledgement of a worker whose lease had run out deleted the message " +
          "another worker was handling.",
      );
    }
    fail2.resolve();
    assertEquals(
      await within(
        again.promise,
        "the message to be handed out again after the second worker failed " +
          "(the stale acknowledgement may have deleted it)",
        EVENT_TIMEOUT_MS + run.leaseMs * 3,
      ),
      message,
    );
  } finally {
    fail2.resolve();
    await rm(finishFile, { force: true });
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid!, "SIGCONT");
      } catch {
        // Already gone.
      }
      child.kill("SIGKILL");
      await within(exited.promise, "the first worker to exit", EVENT_TIMEOUT_MS).catch(() => {});
    }
  }
}
