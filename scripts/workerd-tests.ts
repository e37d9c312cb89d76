// Runs the test files listed in tests/workerd/suites.ts inside Cloudflare's
// workerd, the fourth runtime of `npm test` (scripts/test.ts calls this as
// its "workerd" runtime).  Steps:
//
// 1. writes an entry module that imports the listed files (each registers
//    its tests in @fedify/fixture's testDefinitions, workerd being the
//    fixture's "harness" runtime) and re-exports the harness Worker
//    (tests/workerd/src/harness/worker.ts);
// 2. bundles it with `deno bundle --platform browser`, as a Worker would
//    be deployed;
// 3. starts the Fedwork server on Node.js the federation tests talk to
//    (tests/workerd/src/node-peer.ts), then the Worker in Miniflare with a
//    Workers KV namespace (KV), a D1 database (DB), a Cloudflare queue
//    whose consumer is the Worker itself (QUEUE) and both origins
//    (WORKER_ORIGIN, NODE_ORIGIN), on the workerd the tests install;
// 4. asks the Worker for its tests and runs them one request each,
//    printing each outcome, then "workerd: N passed, M failed, K skipped".
//
// Usage: node --conditions=fedwork-source scripts/workerd-tests.ts
//          [--filter <test name pattern>] [path…]
//   path…     runs only the listed files whose path contains one of these
//   --filter  runs only the tests whose name matches this regular expression
// Exits non-zero when a test failed or the Worker could not be run.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import process from "node:process";
import { Miniflare } from "miniflare";
import { bundleWorker, freeLoopbackPort, workspaceBinary } from "@fedify/fixture/workerd";
import { WORKERD_TEST_FILES } from "../tests/workerd/suites.ts";
import { startNodePeer } from "../tests/workerd/src/node-peer.ts";

const root = resolve(import.meta.dirname!, "..");

// Miniflare pins an older workerd (2026-07-30 here), which does not know
// the compatibility date the test Worker needs (one that turns on
// node:child_process, which @fedwork/testing imports); run the one the
// `workerd` package installs, as Cloudflare would run the current release.
process.env.MINIFLARE_WORKERD_PATH ??= workspaceBinary("workerd");

// Bounds a hanging test (one waiting on an event that never comes), not a
// speed check: each test runs in its own request, cut off after this long.
const TEST_LIMIT_MS = 5 * 60_000;
const QUEUE_NAME = "fedwork-workerd-tests";

const args = process.argv.slice(2);
let namePattern: RegExp | undefined;
const filters: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--filter") {
    const pattern = args[++i];
    if (pattern == null || pattern === "") throw new Error("--filter: give a pattern");
    namePattern = new RegExp(pattern);
  } else filters.push(args[i]);
}

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

function report(counts: Counts): never {
  console.log(
    `\nworkerd: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`,
  );
  process.exit(counts.failed > 0 ? 1 : 0);
}

const files = filters.length === 0
  ? [...WORKERD_TEST_FILES]
  : WORKERD_TEST_FILES.filter((file) => filters.some((filter) => file.includes(filter)));
if (files.length === 0) {
  console.log("No file of tests/workerd/suites.ts matches the given paths.");
  report({ passed: 0, failed: 0, skipped: 0 });
}

const started = performance.now();
// Inside the repository, so that the bundler resolves the workspace's
// packages through its deno.json; one directory per run, since several
// runs may share the working tree.
const dir = join(root, ".ci-out", `workerd-${process.pid}`);
await mkdir(dir, { recursive: true });
const cleanups: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
try {
  const entry = join(dir, "entry.ts");
  const specifier = (file: string) => JSON.stringify(relative(dir, join(root, file)));
  await writeFile(
    entry,
    `import ${specifier("tests/workerd/src/harness/setup.ts")};\n` +
      files.map((file) => `import ${specifier(file)};\n`).join("") +
      `export { default } from ${specifier("tests/workerd/src/harness/worker.ts")};\n`,
  );
  const bundle = join(dir, "worker.js");
  await bundleWorker(entry, bundle);
  const bundled = performance.now();

  const peer = await startNodePeer();
  cleanups.push(() => peer.close());
  const port = await freeLoopbackPort();
  const workerOrigin = `http://127.0.0.1:${port}`;
  const miniflare = new Miniflare({
    modules: [{ type: "ESModule", path: bundle }],
    // A date the installed workerd knows; from 2026-08-04 on, nodejs_compat
    // (which @fedify/vocab needs when it loads) is on by default, and
    // workerd offers the node: modules @fedwork/testing imports.
    compatibilityDate: "2026-11-01",
    host: "127.0.0.1",
    port,
    kvNamespaces: ["KV"],
    d1Databases: ["DB"],
    queueProducers: { QUEUE: { queueName: QUEUE_NAME } },
    queueConsumers: {
      // Batches leave at once rather than after Cloudflare's default five
      // seconds; retries are generous so that they never run out in a test.
      [QUEUE_NAME]: { maxBatchSize: 10, maxBatchTimeout: 0, maxRetries: 10 },
    },
    bindings: { WORKER_ORIGIN: workerOrigin, NODE_ORIGIN: peer.origin },
  });
  cleanups.push(() => miniflare.dispose());
  await miniflare.ready;

  const listing = await fetch(`${workerOrigin}/__tests`);
  if (!listing.ok) {
    throw new Error(
      `The Worker did not list its tests (${listing.status}): ${await listing.text()}`,
    );
  }
  const tests = await listing.json() as { name: string; ignore: boolean }[];
  console.log(
    `workerd: ${tests.length} tests in ${files.length} files, bundled in ` +
      `${((bundled - started) / 1000).toFixed(1)} s`,
  );
  for (const [index, { name, ignore }] of tests.entries()) {
    if (namePattern != null && !namePattern.test(name)) continue;
    if (ignore) {
      counts.skipped++;
      console.log(`skip  ${name}`);
      continue;
    }
    let result: { status: string; error?: { message: string; stack?: string } };
    try {
      const response = await fetch(`${workerOrigin}/__run?index=${index}`, {
        signal: AbortSignal.timeout(TEST_LIMIT_MS),
      });
      const text = await response.text();
      result = response.ok ? JSON.parse(text) : {
        status: "failed",
        error: { message: `The Worker answered ${response.status}: ${text}` },
      };
    } catch (error) {
      result = { status: "failed", error: { message: String(error) } };
    }
    if (result.status === "passed") {
      counts.passed++;
      console.log(`ok    ${name}`);
    } else if (result.status === "ignored") {
      counts.skipped++;
      console.log(`skip  ${name}`);
    } else {
      counts.failed++;
      console.log(`FAIL  ${name}`);
      const detail = result.error?.stack?.includes(result.error.message)
        ? result.error.stack
        : [result.error?.message, result.error?.stack].filter(Boolean).join("\n");
      console.log(detail?.replace(/^/gm, "      "));
    }
  }
  if (namePattern != null && counts.passed + counts.failed + counts.skipped === 0) {
    console.log(`No workerd test name matches --filter ${namePattern.source}.`);
  }
  console.log(`workerd: ran in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  console.error("workerd: could not run the tests:", error);
  counts.failed++;
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
}
report(counts);
