// Task deduplication through a KvStore reservation (the path queues that
// cannot deduplicate natively, such as AMQP, take), across two processes
// sharing a SQLite KvStore.
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { assertEquals, test, within } from "@fedify/fixture";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { SqliteKvStore, SqliteMessageQueue } from "./mod.ts";

test("keyed enqueues from two processes through a KvStore reservation enqueue one task", async () => {
  const namespace = `fedwork-sqlite-kv-dedup-${crypto.randomUUID()}`;
  const path = databasePath(namespace);
  try {
    {
      // Create the tables before the children race to.
      await using kv = new SqliteKvStore({ path });
      await using queue = new SqliteMessageQueue({ path });
      await kv.get(["setup"]);
      await queue.getDepth();
    }
    const script = fileURLToPath(new URL("./testdata/kv-dedup-enqueuer.ts", import.meta.url));
    const counts = await within(
      Promise.all([runChild(script, path), runChild(script, path)]),
      "the two enqueuing processes",
      90_000,
    );
    assertEquals(counts[0] + counts[1], 1, `enqueued per process: ${counts}`);
    await using queue = new SqliteMessageQueue({ path });
    assertEquals((await queue.getDepth()).queued, 1);
  } finally {
    await cleanup(namespace);
  }
});

function runChild(script: string, path: string): Promise<number> {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const command = deno == null ? process.execPath : deno.execPath();
  const args = deno == null ? [script, path, "25"] : ["run", "-A", script, path, "25"];
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(command, args, {
    cwd: process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const match = /^ENQUEUED (\d+)$/m.exec(stdout);
      if (code === 0 && match != null) resolve(Number(match[1]));
      else reject(new Error(`The enqueuing process exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
}
