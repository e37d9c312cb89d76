// `main.ts` as systemd or Kubernetes runs it: a real process per role,
// stopped with SIGTERM, exits by itself with code 0.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { assertEquals, detectRuntime, test, within } from "@fedify/fixture";

// Generous: a runtime start and the SQLite files on a busy machine.
const START_TIMEOUT_MS = 90_000;
const EXIT_TIMEOUT_MS = 60_000;

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const variants = [
  { role: "worker", engine: "SQLite" },
  { role: "all", engine: "SQLite" },
  // The worker that used to hang until SIGKILL: its Redis connections.
  { role: "worker", engine: "Redis" },
] as const;

for (const { role, engine } of variants) {
  test(`main.ts --role ${role} on ${engine} exits by itself with code 0 on SIGTERM`, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "fedwork-main-"));
    const script = new URL("./main.ts", import.meta.url).pathname;
    const name = `main-test-${crypto.randomUUID().slice(0, 8)}`;
    const args = ["--role", role, "--port", "0", "--data", dataDir, "--grace", "5", "--name", name];
    const env: Record<string, string | undefined> = { ...process.env };
    for (const key of ["REDIS_URL", "POSTGRES_URL", "AMQP_URL", "NODE_TEST_CONTEXT"]) {
      delete env[key];
    }
    if (engine === "Redis") env.REDIS_URL = REDIS_URL;
    const child = spawn(
      process.execPath,
      detectRuntime() === "deno" ? ["run", "-A", script, ...args] : [script, ...args],
      { stdio: ["ignore", "pipe", "pipe"], env },
    );
    let output = "";
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    const started = new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        output += chunk;
        if (output.includes(`${role} process for`)) resolve();
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
    });
    try {
      await within(
        Promise.race([
          started,
          exited.then(() => {
            throw new Error(`main.ts exited before it started:\n${output}`);
          }),
        ]),
        () => `main.ts to start:\n${output}`,
        START_TIMEOUT_MS,
      );
      // Not child.kill(): Deno's node:child_process then reports the exit as
      // a death by that signal, even when the child exited with 0.
      process.kill(child.pid!, "SIGTERM");
      const exit = await within(exited, () => `main.ts to exit:\n${output}`, EXIT_TIMEOUT_MS);
      assertEquals(exit, { code: 0, signal: null }, output);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}
