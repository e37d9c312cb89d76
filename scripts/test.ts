// The project's whole check, as CI runs it: set-up (the services and the
// browser the tests need, through scripts/ensure-services.sh), formatting,
// lint, type checks (Deno and tsc against the Node.js types), then every
// *.test.ts file under Deno, Node.js and Bun, and the files listed in
// tests/workerd/suites.ts inside Cloudflare's workerd (scripts/
// workerd-tests.ts).  Prints one summary line per runtime and a final plain
// "N passed, N failed" line; exits non-zero on any failure.
//
// Usage: node scripts/test.ts [--only deno|node|bun|workerd] [--skip-checks]
//                             [--skip-setup] [--filter <test name pattern>]
//                             [--jobs N] [--one-runtime-at-a-time]
//                             [--update-timings] [path…]
//   path…         runs only the test files whose path contains one of these
//                 (for workerd, those of tests/workerd/suites.ts)
//   --filter      runs only the tests whose name matches this regular
//                 expression (Deno's --filter, Node.js's
//                 --test-name-pattern, Bun's --test-name-pattern)
//   --skip-setup  does not run scripts/ensure-services.sh, for those who
//                 run the services themselves; so does FEDWORK_SKIP_SETUP=1
//   --jobs N      how many test files each runtime runs at once (default
//                 DEFAULT_JOBS below, or FEDWORK_TEST_JOBS); 1 runs them one
//                 after another
//   --one-runtime-at-a-time
//                 runs Deno, Node.js, Bun and workerd one after another
//                 instead of at the same time, each streaming its output
//   --update-timings
//                 writes each file's measured time (from Bun's run, in
//                 Bun's --timings format) to scripts/test-timings.json,
//                 which orders every runtime's files so the slowest start
//                 first
//
// How it is fast (2 cores): most test files wait on a service, a lease, a
// TTL or a delay far more than they compute (the backend suites are 72–86%
// idle), so each runtime runs several files at once, the runtimes run side
// by side, the checks run side by side, and the slowest files start first
// so that none is left alone at the end.  Every test isolates what it
// touches (random namespaces, tables and key prefixes, port 0, temporary
// folders), so files and runtimes cannot see each other's state.
import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import process from "node:process";
import { WORKERD_TEST_FILES } from "../tests/workerd/suites.ts";

const root = resolve(import.meta.dirname!, "..");

// The workspace's packages export their built dist/ by default and their
// .ts sources under this condition; tests run the sources, so Node.js and
// Bun (and the processes tests spawn, which inherit the environment) get
// it through NODE_OPTIONS and BUN_OPTIONS.  Deno resolves the workspace
// through deno.json, which names the sources already.
const SOURCE_CONDITION = "fedwork-source";
//
// Node.js also gets a compile cache: it runs every test file in a process
// of its own, and the tests start hundreds of worker processes more, each
// of which would otherwise strip the types of and compile the whole
// workspace again (about 1.1 s of CPU for @fedwork/core, @fedwork/testing
// and a backend; 0.5 s from the cache).  On the 2-core CI machine the
// three runtimes side by side keep both cores busy, so the CPU saved is
// wall time saved.  Deno and Bun keep their own caches.  A cache the user
// set is kept.
const sourceEnvironment: Record<string, string> = {
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --conditions=${SOURCE_CONDITION}`.trim(),
  BUN_OPTIONS: `${process.env.BUN_OPTIONS ?? ""} --conditions=${SOURCE_CONDITION}`.trim(),
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ??
    join(root, "node_modules", ".cache", "node-compile-cache"),
};
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const RUNTIMES = ["deno", "node", "bun", "workerd"] as const;
// Deno, Node.js and Bun run every test file; workerd runs the subset
// tests/workerd/suites.ts lists (what makes sense on Workers), so its count
// is its own and is not compared with theirs.
const FULL_RUNTIMES: readonly RuntimeName[] = ["deno", "node", "bun"];
type RuntimeName = typeof RUNTIMES[number];
/**
 * Test files each runtime runs at once, chosen by measurement on the 2-core
 * CI machine (see CONTRIBUTING.md, "How long the suite takes").
 */
const DEFAULT_JOBS = 4;
const TIMINGS_FILE = join(root, "scripts", "test-timings.json");

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  /** The failed tests' lines, repeated at the end of the run. */
  failures?: string[];
}

/**
 * The lines of `output` that name a failed test, at most 20: repeated at
 * the end of the run, so that the tail of a CI log (often all that is
 * kept) says which tests failed, not only how many.
 */
function failureLines(output: string, pattern: RegExp): string[] {
  // A set: Deno and Node.js name each failure twice, inline and in a summary.
  return [...new Set(output.split("\n").filter((line) => pattern.test(line)))].slice(0, 20);
}

const args = process.argv.slice(2);
let only: RuntimeName[] = [...RUNTIMES];
let skipChecks = false;
// Any value but "" and "0" skips it.
let skipSetup = !["", "0"].includes(process.env.FEDWORK_SKIP_SETUP ?? "");
let namePattern: string | undefined;
let jobs = Number(process.env.FEDWORK_TEST_JOBS || DEFAULT_JOBS);
let oneRuntimeAtATime = false;
let updateTimings = false;
const filters: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--only") {
    only = args[++i].split(",") as RuntimeName[];
    for (const name of only) {
      if (!RUNTIMES.includes(name)) throw new Error(`--only: unknown runtime ${name}`);
    }
  } else if (args[i] === "--skip-checks") skipChecks = true;
  else if (args[i] === "--skip-setup") skipSetup = true;
  else if (args[i] === "--filter") {
    namePattern = args[++i];
    if (namePattern == null || namePattern === "") throw new Error("--filter: give a pattern");
    new RegExp(namePattern); // Fails early on a malformed pattern.
  } else if (args[i] === "--jobs") jobs = Number(args[++i]);
  else if (args[i] === "--one-runtime-at-a-time") oneRuntimeAtATime = true;
  else if (args[i] === "--update-timings") updateTimings = true;
  else filters.push(args[i]);
}
if (!Number.isInteger(jobs) || jobs < 1) {
  throw new Error(`--jobs (or FEDWORK_TEST_JOBS): give a whole number of files at once, ≥ 1`);
}

const nodeMajor = Number(process.versions.node.split(".")[0]);
if (nodeMajor < 24) {
  console.error(
    `scripts/test.ts runs on Node.js ${process.versions.node}; Fedwork needs 24 or newer. ` +
      "Run it through `npm test`, which uses the Node.js pinned in package.json.",
  );
  process.exit(1);
}

// The longest one step may take.  A whole runtime's tests take 3–5 minutes
// on the 2-core CI machine and a check at most about one; past these limits
// something hangs (a test waiting on an event that never comes, a process
// kept alive by an open handle), and the step is stopped and failed with
// its name, rather than eating CI's 90 minutes with no word of where.
// A slower machine (a run of this tree took 1.5× its usual time) pushed
// Node.js's 12 minutes past a 20-minute limit, so the limit leaves room.
const TEST_RUN_LIMIT_MS = 35 * 60_000;
const CHECK_LIMIT_MS = 8 * 60_000;
// Installing Chromium, PostgreSQL, Redis and RabbitMQ on a fresh machine
// and starting them takes a few minutes; when all is there, well under one
// second.
const SETUP_LIMIT_MS = 15 * 60_000;

function run(
  command: string,
  commandArgs: string[],
  options: {
    capture?: boolean;
    env?: Record<string, string>;
    cwd?: string;
    limitMs?: number;
    /**
     * Whether the output goes to this process's as it comes (the default);
     * steps that run side by side keep theirs (`capture`) to print whole.
     */
    stream?: boolean;
    /** With `stream: false`, a heading under which the output is printed whole at the end. */
    printWhenDone?: string;
  } = {},
): Promise<{ code: number; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, commandArgs, {
      cwd: options.cwd ?? root,
      env: { ...process.env, NO_COLOR: "1", ...sourceEnvironment, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so that a step over its limit is stopped
      // with every process it started (Node.js runs a process per file).
      detached: true,
    });
    const limitMs = options.limitMs ?? CHECK_LIMIT_MS;
    let overLimit = false;
    const limit = setTimeout(() => {
      overLimit = true;
      console.error(
        `\n${relative(root, command)} ${commandArgs.slice(0, 2).join(" ")}… ran past its ` +
          `limit of ${limitMs / 60_000} minutes and was stopped: something hangs.`,
      );
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, limitMs);
    let output = "";
    const stream = options.stream ?? true;
    child.stdout.on("data", (chunk: Buffer) => {
      if (stream) process.stdout.write(chunk);
      if (options.capture || !stream) output += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stream) process.stderr.write(chunk);
      if (options.capture || !stream) output += chunk;
    });
    child.on("error", (error) => {
      clearTimeout(limit);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(limit);
      if (!stream && options.printWhenDone != null) {
        process.stdout.write(`\n=== ${options.printWhenDone}\n${output}\n`);
      }
      resolvePromise({ code: overLimit ? 1 : code ?? 1, output });
    });
  });
}

async function findTestFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...await findTestFiles(path));
    else if (entry.name.endsWith(".test.ts")) found.push(relative(root, path));
  }
  return found.sort();
}

async function manualPages(): Promise<string[]> {
  const dir = join(root, "docs", "manual");
  return (await readdir(dir)).filter((f) => f.endsWith(".md")).map((f) =>
    join("docs", "manual", f)
  );
}

// Set-up comes first, so that a missing service or browser stops the run
// at once with one message saying what is missing and how to get it,
// rather than failing deep inside a test minutes later.  The script prints
// "all present" exactly when it had nothing to do.
const ENSURE_SERVICES = join(root, "scripts", "ensure-services.sh");
if (skipSetup) {
  console.log("setup: skipped (--skip-setup or FEDWORK_SKIP_SETUP)");
} else {
  console.log("\n=== setup");
  const started = performance.now();
  const { code, output } = await run("bash", [ENSURE_SERVICES], {
    capture: true,
    limitMs: SETUP_LIMIT_MS,
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (code !== 0) {
    console.error(
      `setup: failed after ${seconds} s, so no test ran; see above.  If you run these ` +
        "services yourself, skip this step with --skip-setup or FEDWORK_SKIP_SETUP=1.",
    );
    process.exit(1);
  }
  console.log(
    /\ball present\b/.test(output)
      ? `setup: everything present (${seconds} s)`
      : `setup: done (${seconds} s)`,
  );
}

/**
 * Runs `work` on every item, at most `size` at a time, in the items' order.
 */
async function inPool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, lane));
}

// Checks that run at once: most are CPU-bound (type checks, packing), so
// two, one a core.
const CHECK_JOBS = 2;
let checksFailed = false;
if (!skipChecks) {
  const checks: [string, string, string[], string?][] = [
    ["format", bin("deno"), ["fmt", "--check"]],
    ["lint", bin("deno"), ["lint"]],
    ["deno check", bin("deno"), ["check"]],
    // The manual's code blocks must type-check against the real API.
    ["manual code blocks", bin("deno"), ["check", "--doc-only", ...await manualPages()]],
    ["tsc", bin("tsc"), ["-p", "tsconfig.json"]],
    // No import cycles; no upward imports between core's layers.
    ["layers", process.execPath, [join(root, "scripts", "check-layers.ts")]],
    // No test file awaits at its top level once it has registered a test:
    // Node.js's runner (--test-force-exit) would end it before the rest.
    ["tests registered in time", process.execPath, [
      join(root, "scripts", "check-test-registration.ts"),
    ]],
    // Loading @fedwork/core reaches no node: module, so that it starts on
    // runtimes without them (Cloudflare Workers); Node-only code imports
    // them lazily.
    ["core loads without node: modules", process.execPath, [
      join(root, "scripts", "check-core-load.ts"),
    ]],
    // Every published entry point exports what the committed snapshot
    // lists; on a difference it says to run
    // `node scripts/check-exports.ts --update` and review the diff.
    ["exports snapshot", process.execPath, [join(root, "scripts", "check-exports.ts")]],
    // One version for every published package, asked for exactly by what
    // depends on it, in core's FEDWORK_VERSION (the User-Agent), and never
    // exceeded by a @since tag.
    ["versions", process.execPath, [join(root, "scripts", "check-versions.ts")]],
    // Every name a Fedify 2.3 app imports is in Fedwork or on the committed
    // list of deliberate differences, scripts/fedify-parity.json, from which
    // the "Coming from Fedify" page's table is generated.
    ["Fedify parity", process.execPath, [join(root, "scripts", "check-fedify-parity.ts")]],
    // Every published package is ready for JSR: one dry run from the root
    // publishes the whole workspace (the test fixture says "publish":
    // false), which takes a ninth of the time of one run a package.
    // --allow-dirty: the check must not depend on whether the working tree
    // is committed.
    ["jsr dry run", bin("deno"), ["publish", "--dry-run", "--allow-dirty", "--quiet"]],
    // Packed, installed elsewhere and run on all three runtimes.
    ["packaging", process.execPath, [join(root, "scripts", "check-packaging.ts")]],
    // The benchmark harness at its smoke size: every system (Fedwork and its
    // peers, on Redis, PostgreSQL, SQLite, RabbitMQ and in process) must run
    // and produce numbers, so that the harness never rots.  Never a speed
    // check.
    ["bench smoke", bin("node"), [
      `--conditions=${SOURCE_CONDITION}`,
      join(root, "bench", "harness", "main.ts"),
      "all",
      "--size",
      "smoke",
    ]],
  ];
  // After set-up, a second run of the script must have nothing to do: it
  // would install and start nothing.  The check asserts that (it says "all
  // present" and exits 0), not how long it takes, so a slow machine cannot
  // fail it.
  if (!skipSetup) {
    checks.unshift(["setup is a no-op when run again", "bash", [ENSURE_SERVICES, "--check"]]);
  }
  // Side by side, CHECK_JOBS at a time, longest first: each prints its
  // output whole when it ends, under its name.
  await inPool(checks, CHECK_JOBS, async ([label, command, commandArgs, cwd]) => {
    const started = performance.now();
    const { code, output } = await run(command, commandArgs, { stream: false, cwd });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`\n=== ${label} (${seconds} s)`);
    if (output !== "") process.stdout.write(output.endsWith("\n") ? output : `${output}\n`);
    if (code !== 0) {
      console.error(`${label}: failed`);
      checksFailed = true;
    }
  });
}

// tests/ holds test-only workspaces, such as the Fedify compatibility suite.
const roots = ["packages", "examples", "tests"].map((d) => join(root, d));
let files: string[] = [];
for (const dir of roots) {
  try {
    files.push(...await findTestFiles(dir));
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  }
}
if (filters.length > 0) {
  files = files.filter((f) => filters.some((filter) => f.includes(filter)));
}
files = await slowestFirst(files);
const workerdFiles = filters.length === 0
  ? WORKERD_TEST_FILES
  : WORKERD_TEST_FILES.filter((f) => filters.some((filter) => f.includes(filter)));
// A runtime with no file to run is left out, rather than given no path
// (which would make Deno, say, run every test it finds).
only = only.filter((name) => (name === "workerd" ? workerdFiles : files).length > 0);
if (only.length === 0) {
  console.error("No test files found.");
  process.exit(1);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The files, those that took longest in the last measured run first (files
 * not measured yet count as slow, so a new slow file cannot end a run
 * alone), then by name.
 */
async function slowestFirst(list: string[]): Promise<string[]> {
  let timings: Record<string, number> = {};
  try {
    timings = JSON.parse(await readFile(TIMINGS_FILE, "utf8")).files;
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  }
  const time = (file: string) => timings[file] ?? Number.POSITIVE_INFINITY;
  return [...list].sort((a, b) => time(b) - time(a) || a.localeCompare(b));
}

const stream = oneRuntimeAtATime;

async function runDeno(): Promise<Counts> {
  const { output } = await run(bin("deno"), [
    "test",
    "-A",
    "--no-check",
    ...(jobs > 1 ? ["--parallel"] : []),
    // Deno takes a regular expression between slashes.
    ...(namePattern == null ? [] : ["--filter", `/${namePattern}/`]),
    ...files,
  ], {
    capture: true,
    stream,
    printWhenDone: "output of the tests on deno",
    limitMs: TEST_RUN_LIMIT_MS,
    env: { DENO_JOBS: String(jobs) },
  });
  const match = output.match(
    /(\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed(?: \(\d+ steps?\))?(?: \| (\d+) ignored)?/,
  );
  if (match == null) return { passed: 0, failed: 1, skipped: 0 };
  return {
    passed: +match[1],
    failed: +match[2],
    skipped: +(match[3] ?? 0),
    // Deno's FAILURES list: "name => ./file.ts:1:2".
    failures: failureLines(output, / => \.?\/?\S+\.ts:\d+:\d+$/),
  };
}

async function runNode(): Promise<Counts> {
  // One file per run: several runs may share the working tree at once.
  const summaryFile = join(root, ".ci-out", `node-summary-${process.pid}.json`);
  await mkdir(join(root, ".ci-out"), { recursive: true });
  const { code, output } = await run(bin("node"), [
    "--test",
    // A file whose tests all finished but that left a handle open (a timer,
    // a socket) would otherwise keep its process, and this whole run,
    // waiting until the time limit; Deno and Bun end a file when its tests
    // end.  Leaks still show in Deno's runs.
    "--test-force-exit",
    `--test-concurrency=${jobs}`,
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${join(root, "scripts", "node-summary-reporter.ts")}`,
    `--test-reporter-destination=${summaryFile}`,
    ...(namePattern == null ? [] : [`--test-name-pattern=${namePattern}`]),
    ...files,
  ], {
    capture: true,
    stream,
    printWhenDone: "output of the tests on node",
    limitMs: TEST_RUN_LIMIT_MS,
  });
  // The spec reporter's own summary ("ℹ tests N") counts nested steps too,
  // which Deno and Bun count apart or not at all, so the count compared
  // across runtimes is the summary reporter's: top-level tests only.
  try {
    const counts = JSON.parse(await readFile(summaryFile, "utf8")) as Counts;
    counts.failures = failureLines(output, /^\s*✖ (?!failing tests:)/);
    if (code !== 0 && counts.failed === 0) {
      // Say so: a crash after the last test, or a file killed before it
      // reported, shows nowhere else.
      console.error(
        `node: exited with code ${code}, but no test failed; the end of its output:\n` +
          output.split("\n").slice(-40).join("\n"),
      );
      counts.failed = 1;
    }
    return counts;
  } catch {
    return { passed: 0, failed: 1, skipped: 0 };
  } finally {
    await rm(summaryFile, { force: true });
  }
}

async function runBun(): Promise<Counts> {
  const { code, output } = await run(
    bin("bun"),
    [
      "test",
      ...(jobs > 1 ? [`--parallel=${jobs}`] : []),
      // Bun's own record of each file's time, which orders all three
      // runtimes' files (see slowestFirst()).
      ...(await exists(TIMINGS_FILE) ? ["--timings", TIMINGS_FILE] : []),
      ...(updateTimings ? ["--update-timings"] : []),
      ...(namePattern == null ? [] : ["--test-name-pattern", namePattern]),
      ...files.map((f) => `./${f}`),
    ],
    {
      capture: true,
      stream,
      printWhenDone: "output of the tests on bun",
      limitMs: TEST_RUN_LIMIT_MS,
    },
  );
  const count = (word: string) =>
    +(output.match(new RegExp(`^\\s*(\\d+) ${word}$`, "m"))?.[1] ?? 0);
  const counts = {
    passed: count("pass"),
    failed: count("fail"),
    skipped: count("skip"),
    failures: failureLines(output, /^\(fail\) /),
  };
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  return counts;
}

// scripts/workerd-tests.ts bundles the files of tests/workerd/suites.ts
// the path filters leave, runs them in one Worker and ends with the line
// "workerd: N passed, M failed, K skipped".
async function runWorkerd(): Promise<Counts> {
  const { code, output } = await run(process.execPath, [
    `--conditions=${SOURCE_CONDITION}`,
    join(root, "scripts", "workerd-tests.ts"),
    ...(namePattern == null ? [] : ["--filter", namePattern]),
    ...filters,
  ], {
    capture: true,
    stream,
    printWhenDone: "output of the tests on workerd",
    limitMs: TEST_RUN_LIMIT_MS,
  });
  const match = output.match(/^workerd: (\d+) passed, (\d+) failed, (\d+) skipped$/m);
  if (match == null) return { passed: 0, failed: 1, skipped: 0 };
  const counts = { passed: +match[1], failed: +match[2], skipped: +match[3] };
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  return counts;
}

const runners: Record<RuntimeName, () => Promise<Counts>> = {
  deno: runDeno,
  node: runNode,
  bun: runBun,
  workerd: runWorkerd,
};
const results: [RuntimeName, Counts][] = [];
const runtimeSeconds: Partial<Record<RuntimeName, string>> = {};
const runRuntime = async (name: RuntimeName) => {
  const count = (name === "workerd" ? workerdFiles : files).length;
  const jobsNote = name === "workerd" ? "" : `, ${jobs} at a time`;
  if (stream) console.log(`\n=== tests on ${name} (${count} files${jobsNote})`);
  const started = performance.now();
  results.push([name, await runners[name]()]);
  runtimeSeconds[name] = ((performance.now() - started) / 1000).toFixed(1);
  if (!stream) console.log(`\n=== tests on ${name}: ended after ${runtimeSeconds[name]} s`);
};
if (oneRuntimeAtATime) {
  for (const name of only) await runRuntime(name);
} else {
  console.log(
    `\n=== tests on ${only.join(", ")} side by side; each prints its output when it ends`,
  );
  await Promise.all(only.map(runRuntime));
}
results.sort(([a], [b]) => RUNTIMES.indexOf(a) - RUNTIMES.indexOf(b));

console.log("");
let passed = 0;
let failed = 0;
for (const [name, counts] of results) {
  console.log(
    `${name}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped ` +
      `(${runtimeSeconds[name]} s)`,
  );
  passed += counts.passed;
  failed += counts.failed;
}
for (const [name, counts] of results) {
  if (counts.failed === 0 || counts.failures == null || counts.failures.length === 0) continue;
  console.log(`\nFailed on ${name}:`);
  for (const line of counts.failures) console.log(`  ${line.trim()}`);
}
// Runtimes count the tests a name filter leaves out differently (Bun as
// skipped, the others not at all), so compare what ran.  workerd runs a
// subset of the files, so it is not compared.
const totals = new Set(
  results.filter(([name]) => FULL_RUNTIMES.includes(name)).map(([, c]) =>
    c.passed + c.failed + (namePattern == null ? c.skipped : 0)
  ),
);
if (namePattern != null && passed + failed === 0) {
  console.error(`No test name matches --filter ${namePattern}.`);
  failed++;
}
if (totals.size > 1) {
  console.error("The runtimes ran different numbers of tests; see the lines above.");
  failed++;
}
if (checksFailed) {
  console.error("A static check (format, lint or types) failed; see above.");
  failed++;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
