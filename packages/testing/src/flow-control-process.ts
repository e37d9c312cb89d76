// A process of testDebounceAndThrottle() (see debounce-suite.ts): a
// federation on the backend's engines with one task, "recount".
//
// Usage: <runtime> flow-control-process.ts <backend module URL> <namespace> web|worker
//
// A "web" process starts no worker; it reads commands from its standard
// input, one a line: `ENQ <options JSON> <payload JSON>` enqueues the task
// and prints `RESULT <result JSON>`; `EXIT` disposes of its engines and
// ends it.  A "worker" process starts the queue and prints `READY`; the
// task prints `RAN <id> <payload JSON>`, and each dropped message
// `DROPPED <id> <reason>`.  Both print `ERROR <message>` when a command
// fails.
import process from "node:process";
import { createInterface } from "node:readline";
import { createFederation } from "@fedwork/core";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { passThrough } from "./store-suite.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace, role] = process.argv.slice(2);
if (backendModule == null || namespace == null || (role !== "web" && role !== "worker")) {
  process.stderr.write(
    "Usage: flow-control-process.ts <backend module URL> <namespace> web|worker\n",
  );
  process.exit(2);
}

const { queue, kv, pubsub } = await openBackendModule<ShutdownBackend>(backendModule, namespace);
const federation = createFederation<void>({
  kv,
  queue,
  ...(pubsub == null ? {} : { pubsub }),
  manuallyStartQueue: true,
});
const recount = federation.defineTask("recount", {
  schema: passThrough<{ readonly from: string; readonly i: number }>(),
  async handler(ctx, payload) {
    await say(`RAN ${ctx.task.id} ${JSON.stringify(payload)}`);
  },
  on: {
    dropped: (event) => say(`DROPPED ${event.messageId} ${event.reason}`),
  },
});

async function dispose(): Promise<void> {
  await federation.close?.();
  for (const engine of [pubsub, kv, queue]) {
    await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
  }
}

if (role === "worker") {
  const workers = federation.startQueue(undefined);
  await say("READY");
  await workers;
} else {
  const ctx = federation.createContext(new URL("https://flow.example/"), undefined);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line === "EXIT") break;
    const match = /^ENQ (\S+) (\S+)$/.exec(line);
    if (match == null) {
      await say(`ERROR unknown command ${JSON.stringify(line)}`);
      continue;
    }
    try {
      const result = await ctx.enqueueTask(recount, JSON.parse(match[2]), JSON.parse(match[1]));
      await say(`RESULT ${JSON.stringify(result)}`);
    } catch (error) {
      await say(`ERROR ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  lines.close();
  await dispose();
  process.exit(0);
}
