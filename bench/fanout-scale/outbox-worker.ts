// Fedwork sending from more than one process: the sender process enqueues
// the fan-out into a Redis queue (`RedisMessageQueue`, one queue name a
// run) and does not listen; `workers` processes running this script listen
// on the same queue, so that one of them splits the fan-out into its
// deliveries and all of them send those.  One main thread's HTTP work
// bounds even the bare loop (docs/benchmarks.md), so this is how a fan-out
// goes past one thread.
//
// Run by sender.ts:  outbox-worker.ts <queue name> <setup.json> <concurrency>
// Prints "ready" once listening; then, for each line read on stdin, one
// JSON line with its CPU time so far and its peak resident set; exits when
// stdin closes.
import { readFileSync } from "node:fs";
import process from "node:process";
import { createInterface } from "node:readline";
import type { Federation } from "@fedwork/core";
import { Person } from "@fedify/vocab";
import type { Setup } from "./setup.ts";

/** The Redis server the queue lives on. */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** What a worker reports when asked. */
export interface WorkerReport {
  /** CPU time since the process started, user and system. */
  readonly cpuMs: number;
  /** The larger of the sampled and the kernel's maximum resident set. */
  readonly peakRssBytes: number;
}

/**
 * The key pair of the setup, imported for signing.
 * @param setup The run's setup.
 * @returns The key pair.
 */
export async function importKeyPair(setup: Setup): Promise<CryptoKeyPair> {
  const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  return {
    privateKey: await crypto.subtle.importKey("jwk", setup.privateKey, algorithm, true, ["sign"]),
    publicKey: await crypto.subtle.importKey("jwk", setup.publicKey, algorithm, true, ["verify"]),
  };
}

/**
 * A Fedwork federation on a Redis queue, the same in the sender and its
 * workers.
 * @param queueName The Redis queue's name, one a run.
 * @param keyPair The sender's key pair.
 * @param concurrency How many messages the queue runs at once in this
 *                    process.
 * @returns The federation and its queue.
 */
export async function redisFederation(
  queueName: string,
  keyPair: CryptoKeyPair,
  concurrency: number,
): Promise<{ federation: Federation<void>; queue: AsyncDisposable }> {
  const { createFederation, MemoryKvStore } = await import("@fedwork/core");
  const { RedisMessageQueue } = await import("@fedwork/redis");
  const queue = new RedisMessageQueue({ url: REDIS_URL, queue: queueName, concurrency });
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
  ).setKeyPairsDispatcher(() => [keyPair]);
  return { federation, queue };
}

if (import.meta.main) {
  const [queueName, setupFile, concurrency] = process.argv.slice(2);
  const setup = JSON.parse(readFileSync(setupFile, "utf8")) as Setup;
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 10);
  const { federation, queue } = await redisFederation(
    queueName,
    await importKeyPair(setup),
    Number(concurrency),
  );
  const controller = new AbortController();
  const listening = federation.startQueue(undefined, { signal: controller.signal });
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  lines.on("line", () => {
    const cpu = process.cpuUsage();
    const report: WorkerReport = {
      cpuMs: (cpu.user + cpu.system) / 1000,
      peakRssBytes: Math.max(peakRss, process.resourceUsage().maxRSS * 1024),
    };
    process.stdout.write(JSON.stringify(report) + "\n");
  });
  lines.once("close", async () => {
    clearInterval(sampler);
    controller.abort();
    await listening.catch(() => {});
    await queue[Symbol.asyncDispose]();
    process.exit(0);
  });
}
