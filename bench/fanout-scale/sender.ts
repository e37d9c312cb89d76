// One framework's fan-out, in a fresh process: builds the followers (N,
// spread round-robin over the receiver's hosts, each with its host's shared
// inbox), warms up on a small fan-out, then sends one post to all of them
// with `preferSharedInbox` and times it from `sendActivity()` to the last
// shared inbox's request arriving at the receiver.  Peak memory is sampled
// every 10 ms and read from the kernel's maximum resident set at the end.
// Prints one JSON line.  Run by main.ts:
//   sender.ts <config> <setup.json>
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Create, Note, Person, type Recipient } from "@fedify/vocab";
import { configOf, type SenderResult, type Setup } from "./setup.ts";
import type { WorkerReport } from "./outbox-worker.ts";

const config = configOf(process.argv[2]);
const setup = JSON.parse(readFileSync(process.argv[3], "utf8")) as Setup;
const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
const keyPair = {
  privateKey: await crypto.subtle.importKey("jwk", setup.privateKey, algorithm, true, ["sign"]),
  publicKey: await crypto.subtle.importKey("jwk", setup.publicKey, algorithm, true, ["verify"]),
};

let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 10);

/** `count` followers over the hosts, round-robin, for run `run`. */
function followers(count: number, hosts: readonly string[], run: string): Recipient[] {
  const sharedInboxes = hosts.map((origin) => new URL(`${origin}/${run}/inbox`));
  return Array.from({ length: count }, (_, i) => {
    const h = i % hosts.length;
    return {
      id: new URL(`${hosts[h]}/${run}/users/${i}`),
      inboxId: new URL(`${hosts[h]}/${run}/users/${i}/inbox`),
      endpoints: { sharedInbox: sharedInboxes[h] },
    };
  });
}

const senderOrigin = "https://sender.example";
const post = () =>
  new Create({
    id: new URL(`${senderOrigin}/creates/${crypto.randomUUID()}`),
    actor: new URL(`${senderOrigin}/users/alice`),
    object: new Note({ id: new URL(`${senderOrigin}/notes/1`), content: "x".repeat(500) }),
  });

type Send = (to: Recipient[]) => Promise<void>;
type Report = () => Promise<WorkerReport[]>;

/**
 * Starts `count` outbox worker processes on the Redis queue `queueName`;
 * resolves once all listen.
 */
async function startWorkers(count: number, queueName: string, concurrency: number) {
  const script = join(dirname(fileURLToPath(import.meta.url)), "outbox-worker.ts");
  const workers = Array.from({ length: count }, () => {
    const proc = spawn(
      process.execPath,
      [...process.execArgv, script, queueName, process.argv[3], String(concurrency)],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
    const next = async () => {
      const { value, done } = await lines.next();
      if (done) throw new Error("an outbox worker exited");
      return value as string;
    };
    return { proc, next };
  });
  for (const worker of workers) await worker.next();
  return {
    report: () =>
      Promise.all(workers.map(async (worker) => {
        worker.proc.stdin!.write("report\n");
        return JSON.parse(await worker.next()) as WorkerReport;
      })),
    stop: () =>
      Promise.all(workers.map((worker) =>
        new Promise((resolve) => {
          worker.proc.once("exit", resolve);
          worker.proc.stdin!.end();
        })
      )),
  };
}

/**
 * Sets the chosen framework up and returns how to send and how to stop.
 * Only that framework is loaded, so that the other's modules do not count
 * in this process's memory.
 */
async function start(): Promise<{ send: Send; stop: () => Promise<void>; report?: Report }> {
  const controller = new AbortController();
  if ((config.workers ?? 0) > 0) {
    const { redisFederation } = await import("./outbox-worker.ts");
    const queueName = `fanout-${process.pid}-${Date.now()}`;
    const { federation, queue } = await redisFederation(queueName, keyPair, config.parallel);
    const workers = await startWorkers(config.workers!, queueName, config.parallel);
    const ctx = federation.createContext(new URL(senderOrigin), undefined);
    return {
      send: (to) =>
        ctx.sendActivity({ identifier: "alice" }, to, post(), { preferSharedInbox: true }),
      stop: async () => {
        await workers.stop();
        await queue[Symbol.asyncDispose]();
      },
      report: workers.report,
    };
  }
  if (config.framework === "bare") {
    const { bareSender } = await import("./bare-sender.ts");
    const bare = bareSender(keyPair.privateKey, `${senderOrigin}/users/alice#main-key`);
    return {
      send: async (to) => bare.send(to, await post().toJsonLd()),
      stop: bare.stop,
    };
  }
  if (config.framework === "fedwork") {
    const { createFederation, InProcessMessageQueue, MemoryKvStore, ParallelMessageQueue } =
      await import("@fedwork/core");
    const federation = createFederation<void>({
      kv: new MemoryKvStore(),
      queue: config.parallel > 1
        ? new ParallelMessageQueue(new InProcessMessageQueue(), config.parallel)
        : new InProcessMessageQueue(),
      manuallyStartQueue: true,
      allowPrivateAddress: true,
      fanoutDeliveries: config.direct > 0 ? { concurrency: config.direct } : false,
    });
    federation.setActorDispatcher(
      "/users/{identifier}",
      (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
    ).setKeyPairsDispatcher(() => [keyPair]);
    const workers = federation.startQueue(undefined, { signal: controller.signal });
    const ctx = federation.createContext(new URL(senderOrigin), undefined);
    return {
      send: (to) =>
        ctx.sendActivity({ identifier: "alice" }, to, post(), { preferSharedInbox: true }),
      stop: async () => {
        controller.abort();
        await workers;
      },
    };
  }
  const {
    createFederation: createFedifyFederation,
    InProcessMessageQueue: FedifyInProcessMessageQueue,
    MemoryKvStore: FedifyMemoryKvStore,
    ParallelMessageQueue: FedifyParallelMessageQueue,
  } = await import("@fedify/fedify");
  const federation = createFedifyFederation<void>({
    kv: new FedifyMemoryKvStore(),
    queue: config.parallel > 1
      ? new FedifyParallelMessageQueue(new FedifyInProcessMessageQueue(), config.parallel)
      : new FedifyInProcessMessageQueue(),
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
  ).setKeyPairsDispatcher(() => [keyPair]);
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const ctx = federation.createContext(new URL(senderOrigin), undefined);
  return {
    send: (to) =>
      ctx.sendActivity({ identifier: "alice" }, to, post(), { preferSharedInbox: true }),
    stop: async () => {
      controller.abort();
      await workers;
    },
  };
}

async function fanOut(send: Send, to: Recipient[], hosts: number, run: string) {
  const workersBefore = await report?.() ?? [];
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await send(to);
  const enqueuedMs = performance.now() - started;
  const response = await fetch(`${setup.control}/wait?run=${run}&count=${hosts}`);
  const stats = await response.json();
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const workers = (await report?.() ?? []).map((after, i) => ({
    cpuMs: after.cpuMs - workersBefore[i].cpuMs,
    peakRssBytes: after.peakRssBytes,
  }));
  return { ms, enqueuedMs, cpu, stats, workers };
}

const { send, stop, report } = await start();
// Warm-up: one follower on each of the first 50 hosts, uncounted.
const warmHosts = setup.origins.slice(0, Math.min(50, setup.origins.length));
await fanOut(
  send,
  followers(warmHosts.length, warmHosts, `${config.id}-warm`),
  warmHosts.length,
  `${config.id}-warm`,
);
const run = `${config.id}-${process.pid}`;
const audience = followers(setup.followers, setup.origins, run);
const rssBeforeSend = process.memoryUsage.rss();
const measured = await fanOut(send, audience, setup.origins.length, run);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss());
await stop();
const result: SenderResult = {
  config: config.id,
  ...(config.framework === "fedwork" ? { fedworkUrl: import.meta.resolve("@fedwork/core") } : {}),
  followers: audience.length,
  deliveries: setup.origins.length,
  ms: measured.ms,
  enqueuedMs: measured.enqueuedMs,
  cpuMs: (measured.cpu.user + measured.cpu.system) / 1000 +
    measured.workers.reduce((sum, w) => sum + w.cpuMs, 0),
  rssBeforeSendBytes: rssBeforeSend,
  peakRssSampledBytes: peakRss,
  maxRssBytes: process.resourceUsage().maxRSS * 1024,
  received: measured.stats,
  ...(report == null ? {} : { workers: measured.workers }),
};
process.stdout.write(JSON.stringify(result) + "\n");
process.exit(0);
