// The many-workers soak (not a test): producers and several worker
// processes on one engine, workers SIGKILLed at random and replaced; reports
// throughput, lost and duplicated tasks and the redelivery delays.
//
//   npm run soak -- --engine redis --workers 6 --tasks 200000 --kill-every 5s
//
// Engines: redis, redis-cluster, postgres, amqp, amqp-quorum (each uses the
// backend's conformance factory, so the same services and environment
// variables as its tests).  Other options: --lease <ms> (2000), --listeners
// <n> per worker (2), --handler-ms <ms> (1), --producers <n> (2), --seed
// <n>, --json <file>.  Exits 1 when a task was lost or handled twice in a
// way at-least-once delivery does not explain.
import { writeFile } from "node:fs/promises";
import process from "node:process";
import { type QueueSoakReport, runQueueSoak } from "@fedwork/testing";

// The worker processes inherit the environment: make them run the
// workspace's sources, as this process does, not its built dist/.
if (!(process.env.NODE_OPTIONS ?? "").includes("fedwork-source")) {
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --conditions=fedwork-source`.trim();
}

const FACTORIES: Record<string, string> = {
  "redis": "../packages/redis/src/testdata/conformance-factory.ts",
  "redis-cluster": "../packages/redis/src/testdata/cluster-factory.ts",
  "postgres": "../packages/postgres/src/testdata/conformance-factory.ts",
  "amqp": "../packages/amqp/src/testdata/conformance-factory.ts",
  "amqp-quorum": "../packages/amqp/src/testdata/quorum-factory.ts",
};

function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (match == null) throw new RangeError(`Not a duration: ${text} (try 500ms, 5s or 1m).`);
  const unit = match[2] ?? "ms";
  return Number(match[1]) * (unit === "ms" ? 1 : unit === "s" ? 1000 : 60_000);
}

const options = new Map<string, string>();
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  if (!argv[i].startsWith("--") || argv[i + 1] == null) {
    throw new TypeError(`Expected --option value pairs; got ${argv.slice(i).join(" ")}`);
  }
  options.set(argv[i].slice(2), argv[i + 1]);
}
const known = [
  "engine",
  "workers",
  "tasks",
  "kill-every",
  "lease",
  "listeners",
  "handler-ms",
  "producers",
  "seed",
  "json",
];
for (const name of options.keys()) {
  if (!known.includes(name)) throw new TypeError(`Unknown option --${name}; known: ${known}`);
}
const engine = options.get("engine") ?? "redis";
const factory = FACTORIES[engine];
if (factory == null) {
  throw new TypeError(`Unknown engine ${engine}; one of ${Object.keys(FACTORIES).join(", ")}.`);
}
const workers = Number(options.get("workers") ?? 6);
const tasks = Number(options.get("tasks") ?? 20_000);
const killEveryMs = parseDuration(options.get("kill-every") ?? "5s");
console.log(
  `soak: ${engine}, ${workers} workers, ${tasks} tasks, a kill every ${killEveryMs} ms`,
);
const report: QueueSoakReport = await runQueueSoak({
  factoryModule: new URL(factory, import.meta.url).href,
  workers,
  tasks,
  killEveryMs,
  leaseMs: options.has("lease") ? parseDuration(options.get("lease")!) : undefined,
  listeners: options.has("listeners") ? Number(options.get("listeners")) : undefined,
  handlerMs: options.has("handler-ms") ? Number(options.get("handler-ms")) : undefined,
  producers: options.has("producers") ? Number(options.get("producers")) : undefined,
  seed: options.has("seed") ? Number(options.get("seed")) : undefined,
  onProgress: (line) => console.log(`  ${line}`),
});
console.log(JSON.stringify({ engine, ...report }, null, 2));
if (options.has("json")) {
  await writeFile(options.get("json")!, JSON.stringify({ engine, ...report }, null, 2) + "\n");
}
const ok = report.lost === 0 && report.unexplainedDuplicates === 0;
console.log(ok ? "soak: nothing lost" : "soak: FAILED (lost or unexplained duplicates)");
process.exit(ok ? 0 : 1);
