// Where each run keeps its data.  A smoke run (npm test) and a full run
// use different Redis databases, PostgreSQL schemas and RabbitMQ queues, so
// that one never flushes the other's data; two runs of the same size at
// once still collide (do not start two).
import process from "node:process";

/** Whether this process measures at the smoke size (set by child.ts). */
export function isSmoke(): boolean {
  return process.env.FEDWORK_BENCH_NAMESPACE === "smoke";
}

/** Suffixes `name` for a smoke run. */
export function namespaced(name: string, separator = "_"): string {
  return isSmoke() ? `${name}${separator}smoke` : name;
}
