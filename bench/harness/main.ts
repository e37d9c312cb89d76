// The side-by-side benchmark harness:
//
//   npm run bench -- <scenario...|all> [--size smoke|full] [--trials N]
//                    [--json out.json] [--only id,id] [--note text]
//
// Scenarios: redis, postgres, sqlite, amqp, in-process, or all.  For each
// trial, every system of the chosen scenarios runs once, each in a child
// process of its own (Node.js from the workspace, with the fedwork-source
// condition), in an order rotated from one trial to the next, so that
// systems alternate and a slow spell on the machine lands on all of them.
// Prints the median of each metric per system, Fedwork typed tasks over
// each other system as the median of per-trial ratios with their min–max,
// and the targets of issues 22, 10 and 43.  Exits non-zero if a system failed a trial
// or produced a number that is not finite (the smoke check in npm test
// relies on this; it never checks speed).
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { TrialResult } from "./driver.ts";
import {
  comparisons,
  fmtMs,
  fmtRate,
  higherIsBetter,
  medianOf,
  METRIC_LABELS,
  metricOf,
  METRICS,
  type RunResults,
  type SystemResult,
  targets,
} from "./results.ts";
import { type Scenario, SCENARIOS, type Size, SYSTEMS } from "./systems.ts";
import { renderMarkdown, renderSvg, spliceSection } from "./report.ts";
import { collectVersions } from "./versions.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");

function usage(message?: string): never {
  if (message != null) console.error(message);
  console.error(
    "usage: npm run bench -- <redis|postgres|sqlite|amqp|in-process|all>... " +
      "[--size smoke|full] [--trials N] [--json out.json] [--only id,id] [--note text]",
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const scenarios = new Set<Scenario>();
let size: Size = "full";
let trials: number | undefined;
let jsonPath: string | undefined;
let only: Set<string> | undefined;
let note: string | undefined;
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  const value = () => args[++i] ?? usage(`${arg} needs a value`);
  if (arg === "--size") {
    const v = value();
    if (v !== "smoke" && v !== "full") usage(`--size must be smoke or full; got ${v}`);
    size = v;
  } else if (arg === "--trials") {
    trials = Number(value());
    if (!Number.isInteger(trials) || trials < 1) usage("--trials must be a positive integer");
  } else if (arg === "--json") jsonPath = resolve(process.env.INIT_CWD ?? process.cwd(), value());
  else if (arg === "--only") only = new Set(value().split(","));
  else if (arg === "--note") note = value();
  else if (arg === "all") { for (const s of SCENARIOS) scenarios.add(s); }
  else if ((SCENARIOS as readonly string[]).includes(arg)) scenarios.add(arg as Scenario);
  else usage(`unknown argument ${arg}`);
}
if (scenarios.size === 0) usage("name a scenario");
trials ??= size === "smoke" ? 1 : 3;
const specs = SYSTEMS.filter((s) => scenarios.has(s.scenario) && (only?.has(s.id) ?? true));
if (specs.length === 0) usage("no system selected");

const node = join(root, "node_modules", ".bin", "node");
const childTimeoutMs = size === "smoke" ? 120_000 : 600_000;

/** Runs one trial of one system in a child process. */
function runChild(id: string): Promise<TrialResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      node,
      ["--conditions=fedwork-source", join(here, "child.ts"), id, size],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => stdout += chunk);
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      process.stderr.write(chunk);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), childTimeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
      if (code === 0 && line != null) {
        resolvePromise(JSON.parse(line.slice("RESULT ".length)) as TrialResult);
      } else {
        // The error's own line (a stack trace's last lines say little).
        const lines = stderr.trim().split("\n");
        const errorLine = lines.findLast((l) => /\b(\w*Error|error):/.test(l));
        const tail = errorLine?.trim() ?? lines.slice(-3).join(" | ");
        reject(new Error(`exit ${code ?? signal}: ${tail}`));
      }
    });
  });
}

const startedAt = new Date();
const start = performance.now();
const loadBefore = os.loadavg();
process.stderr.write(
  `bench: ${specs.length} systems × ${trials} trial(s), size ${size}, ` +
    `${os.cpus().length} cores, load ${loadBefore.map((l) => l.toFixed(2)).join(" ")}\n`,
);
const results = new Map<string, SystemResult>(
  specs.map((s) => [s.id, {
    id: s.id,
    scenario: s.scenario,
    label: s.label,
    kind: s.kind,
    trials: [],
    errors: [],
  }]),
);
for (let trial = 0; trial < trials; trial++) {
  // Rotate the order within each scenario, so that no system always runs
  // first (on a cold cache) or right after the same neighbour.
  for (const scenario of SCENARIOS) {
    const group = specs.filter((s) => s.scenario === scenario);
    if (group.length === 0) continue;
    const shift = trial % group.length;
    const order = [...group.slice(shift), ...group.slice(0, shift)];
    for (const spec of order) {
      process.stderr.write(`trial ${trial + 1}/${trials}: ${spec.id}\n`);
      const result = results.get(spec.id)!;
      const childStart = performance.now();
      try {
        result.trials[trial] = await runChild(spec.id);
        process.stderr.write(
          `  ${spec.id}: ${((performance.now() - childStart) / 1000).toFixed(1)} s\n`,
        );
      } catch (error) {
        result.trials[trial] = null;
        result.errors.push(`trial ${trial + 1}: ${(error as Error).message}`);
        process.stderr.write(`  ${spec.id} failed: ${(error as Error).message}\n`);
      }
    }
  }
}
const elapsedSeconds = (performance.now() - start) / 1000;

const versions = await collectVersions(root, [...scenarios], specs);
for (const spec of specs) {
  if (spec.packageName != null && versions[spec.packageName] != null) {
    Object.assign(results.get(spec.id)!, { version: versions[spec.packageName] });
  }
}
const cpus = os.cpus();
const run: RunResults = {
  meta: {
    date: startedAt.toISOString(),
    size,
    trials,
    scenarios: [...scenarios],
    elapsedSeconds: Math.round(elapsedSeconds),
    machine: {
      cores: cpus.length,
      cpu: cpus[0]?.model.trim() ?? "unknown",
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      loadBefore: loadBefore.map((l) => Math.round(l * 100) / 100),
      loadAfter: os.loadavg().map((l) => Math.round(l * 100) / 100),
    },
    versions,
    ...(note == null ? {} : { note }),
  },
  systems: [...results.values()],
};

// The tables.
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);
const fmt = (metric: (typeof METRICS)[number], v: number) =>
  higherIsBetter(metric) ? fmtRate(v) : fmtMs(v);
console.log(`\nMedians of ${trials} trial(s) (messages/s; pickup in ms):`);
console.log(pad("system", 52) + METRICS.map((m) => lpad(METRIC_LABELS[m], 13)).join(""));
for (const s of run.systems) {
  console.log(pad(s.label, 52) + METRICS.map((m) => lpad(fmt(m, medianOf(s, m)), 13)).join(""));
}
console.log(
  "\nFedwork typed tasks over each system (median of per-trial ratios [min–max]; " +
    "> 1 means Fedwork is faster):",
);
console.log(pad("comparison", 52) + METRICS.map((m) => lpad(METRIC_LABELS[m], 20)).join(""));
for (const c of comparisons(run)) {
  const cells = METRICS.map((m) => {
    const r = c.ratios[m];
    return lpad(
      r == null ? "—" : `${r.median.toFixed(2)} [${r.min.toFixed(2)}–${r.max.toFixed(2)}]`,
      20,
    );
  });
  console.log(pad(`vs ${c.other.label}`, 52) + cells.join(""));
}
const targetResults = targets(run);
if (targetResults.length > 0) {
  console.log("\nTargets of issues 43, 22 and 10:");
  for (const t of targetResults) {
    console.log(`  ${t.met ? "met   " : "MISSED"}  ${t.target}: ${t.measured}`);
  }
}

if (jsonPath != null) {
  await writeFile(jsonPath, JSON.stringify(run, null, 2) + "\n");
  console.log(`\nWrote ${jsonPath}`);
}
const minutes = Math.floor(elapsedSeconds / 60);
console.log(
  `\nThe run took ${minutes} min ${Math.round(elapsedSeconds - minutes * 60)} s ` +
    `(load average ${run.meta.machine.loadAfter.join(" ")}).`,
);

// Did every system run and produce numbers?
const broken: string[] = [];
for (const s of run.systems) {
  for (const e of s.errors) broken.push(`${s.id}: ${e}`);
  s.trials.forEach((t, k) => {
    if (t == null) return;
    for (const m of METRICS) {
      const v = metricOf(t, m);
      if (!Number.isFinite(v) || v <= 0) broken.push(`${s.id}: trial ${k + 1}: ${m} is ${v}`);
    }
  });
}
// The report must render from these results too (report.ts writes files;
// here it only renders), with a row for every system.
const section = spliceSection("# Doc\n\nkept\n", renderMarkdown(run, "chart.svg"));
const chart = renderSvg(run);
for (const s of run.systems) {
  if (!section.includes(s.label)) broken.push(`${s.id}: missing from the report`);
}
if (!section.includes("kept") || !chart.startsWith("<svg")) {
  broken.push("the report did not render");
}
if (broken.length > 0) {
  console.error(`\n${broken.length} problem(s):\n  ${broken.join("\n  ")}`);
  process.exit(1);
}
