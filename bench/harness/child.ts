// One trial of one system, in a process of its own (started by main.ts):
//   node --conditions=fedwork-source bench/harness/child.ts <system> <size>
// Prints progress on stderr and, last, `RESULT <json>` on stdout.
import process from "node:process";
import { measureAll } from "./measure.ts";
import { type Size, sizesFor, SYSTEMS } from "./systems.ts";

const [id, size] = process.argv.slice(2) as [string, Size];
const spec = SYSTEMS.find((s) => s.id === id);
if (spec == null || (size !== "smoke" && size !== "full")) {
  console.error(`usage: child.ts <system> smoke|full (systems: ${SYSTEMS.map((s) => s.id)})`);
  process.exit(2);
}
// Smoke runs (npm test) and full runs use different databases, schemas and
// queues (see namespace.ts), so that a test run never meets a benchmark.
process.env.FEDWORK_BENCH_NAMESPACE = size;
const sizes = sizesFor(spec.scenario, size);
const driver = await spec.load();
try {
  const result = await measureAll(
    driver,
    sizes,
    size === "smoke" ? 60_000 : 180_000,
    (line) => process.stderr.write(`  ${id}: ${line}\n`),
  );
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
} finally {
  await driver.close();
}
// Some clients keep timers or sockets alive after closing; the result is out.
process.exit(0);
