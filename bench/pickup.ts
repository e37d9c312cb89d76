// Pickup latency alone, in paired trials: Fedwork typed tasks against a peer
// on the same engine, each trial of each system in a process of its own, the
// order of the pair alternating from one trial to the next.
//
//   npm run bench:pickup -- [--trials N] [--baseline DIR]
//        [--messages N] [--pairs fedwork-redis:bullmq,fedwork-postgres:graphile-worker]
//
// Each child first drains 20,000 messages at concurrency 10 (uncounted, so
// that the code on the pickup path is compiled, as in the full harness,
// where the drains come first), then runs the harness's pickup measurement
// (measurePickup(): messages sent one at a time at 100 per second to an
// idle worker at concurrency 1, timed from the start of each enqueue to
// the start of its handler).  Prints each trial, then per pair the medians
// of p50 and p99 and the median of the per-trial ratios peer / Fedwork
// (above 1: Fedwork's latency is lower), with the load average before and
// after.  Uses the databases and schemas of the full harness: do not run it
// beside `npm run bench`.
//
// `--baseline DIR` also runs each pair's Fedwork system from another
// checkout (DIR, with its own node_modules: e.g. `git archive BASE | tar -x
// -C DIR` and a copy of node_modules) in every trial, the three children's
// order rotating, and prints baseline / this checkout per trial and as
// medians (above 1: this checkout's latency is lower), and the baseline's
// own ratio to the peer.
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { measureDrain, measurePickup } from "./harness/measure.ts";
import { median } from "./harness/results.ts";
import { sizesFor, SYSTEMS } from "./harness/systems.ts";

const TIMEOUT_MS = 120_000;

async function child(id: string, messages: number): Promise<void> {
  const spec = SYSTEMS.find((s) => s.id === id);
  if (spec == null) throw new Error(`unknown system ${id}`);
  process.env.FEDWORK_BENCH_NAMESPACE = "full";
  const sizes = { ...sizesFor(spec.scenario, "full"), pickup: messages };
  const driver = await spec.load();
  try {
    await measureDrain(driver, sizes, 10, TIMEOUT_MS);
    const result = await measurePickup(driver, sizes, TIMEOUT_MS);
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  } finally {
    await driver.close();
  }
  process.exit(0);
}

/** Runs one system in a child; `checkout`: the root of another checkout to run it from. */
function runChild(
  id: string,
  messages: number,
  checkout?: string,
): Promise<{ p50: number; p99: number }> {
  const script = checkout == null
    ? fileURLToPath(import.meta.url)
    : path.join(checkout, "bench", "pickup.ts");
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ["--conditions=fedwork-source", script, "--child", id, String(messages)],
      { stdio: ["ignore", "pipe", "inherit"], cwd: checkout },
    );
    let out = "";
    proc.stdout.on("data", (chunk) => out += chunk);
    proc.on("error", reject);
    proc.on("close", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code !== 0 || line == null) reject(new Error(`${id} exited with ${code}`));
      else resolve(JSON.parse(line.slice(7)));
    });
  });
}

const args = process.argv.slice(2);
if (args[0] === "--child") {
  await child(args[1], Number(args[2]));
} else {
  let trials = 5;
  let messages = 500;
  let baseline: string | undefined;
  let pairs = [["fedwork-redis", "bullmq"], ["fedwork-postgres", "graphile-worker"]];
  for (let i = 0; i < args.length; i += 2) {
    if (args[i] === "--trials") trials = Number(args[i + 1]);
    else if (args[i] === "--messages") messages = Number(args[i + 1]);
    else if (args[i] === "--pairs") pairs = args[i + 1].split(",").map((p) => p.split(":"));
    else if (args[i] === "--baseline") baseline = path.resolve(args[i + 1]);
    else throw new Error(`unknown argument ${args[i]}`);
  }
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
  console.log(
    `load average before: ${load()}; ${trials} trials of ${messages} messages` +
      (baseline == null ? "" : `; baseline from ${baseline}`),
  );
  type Latency = { p50: number; p99: number };
  const show = (l: Latency) => `p50 ${l.p50.toFixed(3)} p99 ${l.p99.toFixed(3)} ms`;
  for (const [fedwork, peer] of pairs) {
    const rows: { f: Latency; p: Latency; b?: Latency }[] = [];
    // The baseline's label: never a system id.
    const base = `${fedwork}@baseline`;
    const ids = baseline == null ? [fedwork, peer] : [fedwork, base, peer];
    for (let t = 0; t < trials; t++) {
      // Alternate (two) or rotate (three) the order from trial to trial.
      const order = ids.length === 2
        ? (t % 2 === 0 ? ids : [...ids].reverse())
        : ids.map((_, i) => ids[(i + t) % ids.length]);
      const got: Record<string, Latency> = {};
      for (const id of order) {
        got[id] = id === base
          ? await runChild(fedwork, messages, baseline)
          : await runChild(id, messages);
      }
      rows.push({ f: got[fedwork], p: got[peer], b: got[base] });
      console.log(
        `trial ${t + 1}: ${fedwork} ${show(got[fedwork])}; ${peer} ${show(got[peer])}` +
          (got[base] == null ? "" : `; baseline ${show(got[base])}`),
      );
    }
    const med = (f: (r: typeof rows[number]) => number) => median(rows.map(f)).toFixed(3);
    console.log(
      `${fedwork} vs ${peer}: p50 ${med((r) => r.f.p50)} vs ${med((r) => r.p.p50)} ms ` +
        `(ratio ${med((r) => r.p.p50 / r.f.p50)}×), p99 ${med((r) => r.f.p99)} vs ` +
        `${med((r) => r.p.p99)} ms (ratio ${med((r) => r.p.p99 / r.f.p99)}×); ` +
        `load ${load()}`,
    );
    if (baseline != null) {
      console.log(
        `${fedwork} baseline vs this checkout: p50 ${med((r) => r.b!.p50)} vs ` +
          `${med((r) => r.f.p50)} ms (ratio ${med((r) => r.b!.p50 / r.f.p50)}×), p99 ` +
          `${med((r) => r.b!.p99)} vs ${med((r) => r.f.p99)} ms (ratio ` +
          `${med((r) => r.b!.p99 / r.f.p99)}×); baseline vs ${peer}: p50 ratio ` +
          `${med((r) => r.p.p50 / r.b!.p50)}×, p99 ratio ${med((r) => r.p.p99 / r.b!.p99)}×`,
      );
    }
  }
}
