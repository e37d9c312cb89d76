// Measures the self-hosted set-up of docs/manual/self-hosting.md (not a
// test): the microblog example as one web process and N worker processes on
// PostgreSQL, each a real child process, delivering notes to followers on a
// loopback sink that answers every inbox POST with 202 (after --latency ms,
// standing in for a remote server's response time).  For each setting it
// posts notes through the web role's API and times from the first post to
// the last delivery received, then sends SIGTERM to every process and
// times how long each takes to exit.  The numbers behind the page's sizing
// guidance.
//
// Usage: node -C fedwork-source bench/self-hosting.ts [--followers 200]
//          [--notes 3] [--workers 1,2,4] [--concurrency 1,8] [--trials 1]
//          [--latency 0] [--prefetch ""]   (--prefetch 16,0: also vary the prefetch)
//   (PostgreSQL at POSTGRES_URL, postgres://postgres@127.0.0.1:5432/test by default)
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { SqliteKvStore } from "@fedwork/sqlite";
import postgres from "postgres";
import { Store } from "../examples/microblog/src/store.ts";

const args = process.argv.slice(2);
function option(name: string, fallback: string): string {
  const index = args.indexOf(`--${name}`);
  return index < 0 ? fallback : args[index + 1];
}
const FOLLOWERS = Number(option("followers", "200"));
const NOTES = Number(option("notes", "3"));
const WORKERS = option("workers", "1,2,4").split(",").map(Number);
const CONCURRENCIES = option("concurrency", "1,8").split(",").map(Number);
const TRIALS = Number(option("trials", "1"));
const LATENCY_MS = Number(option("latency", "0"));
// Empty: the engine's default prefetch, QUEUE_PREFETCH unset.
const PREFETCHES = option("prefetch", "").split(",").filter((p) => p !== "");
const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const MAIN = new URL("../examples/microblog/src/main.ts", import.meta.url).pathname;

/** A loopback server of inboxes that counts the POSTs it receives. */
async function startSink() {
  let received = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "POST") {
        received++;
        for (const waiter of waiters.filter((w) => received >= w.count)) waiter.resolve();
      }
      setTimeout(() => res.writeHead(req.method === "POST" ? 202 : 404).end(), LATENCY_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get received() {
      return received;
    },
    until: (count: number) =>
      received >= count ? Promise.resolve() : new Promise<void>((resolve) => {
        waiters.push({ count, resolve });
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts main.ts with `args`; resolves once it printed its start line. */
function startRole(args: string[], env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-C", "fedwork-source", MAIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      if (/process for /.test(output)) resolve(child);
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", (chunk) => output += chunk);
    child.once(
      "exit",
      (code) => reject(new Error(`${args.join(" ")} exited (${code}):\n${output}`)),
    );
  });
}

/** Sends SIGTERM and resolves with the milliseconds until the exit, and its code. */
function stop(child: ChildProcess): Promise<{ ms: number; code: number | null }> {
  const started = performance.now();
  return new Promise((resolve) => {
    child.once("exit", (code) => resolve({ ms: performance.now() - started, code }));
    child.kill("SIGTERM");
  });
}

async function post(webUrl: string, content: string): Promise<void> {
  const response = await fetch(`${webUrl}/api/users/alice/posts`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer bench" },
    body: JSON.stringify({ content }),
  });
  if (response.status !== 201) throw new Error(`post: ${response.status} ${await response.text()}`);
}

interface Result {
  workers: number;
  concurrency: number;
  prefetch: string;
  deliveriesPerSecond: number;
  stopMs: number[];
  codes: (number | null)[];
}

async function measure(workers: number, concurrency: number, prefetch: string): Promise<Result> {
  const name = `bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-self-hosting-"));
  const sink = await startSink();
  // The followers, written into the app's store before the web role opens it.
  const appKv = new SqliteKvStore({ path: join(dataDir, "app.sqlite") });
  const store = new Store(appKv);
  for (let i = 0; i < FOLLOWERS; i++) {
    await store.addFollower("alice", {
      id: `${sink.url}/users/f${i}`,
      inbox: `${sink.url}/users/f${i}/inbox`,
      handle: `@f${i}@${new URL(sink.url).host}`,
    });
  }
  await appKv[Symbol.asyncDispose]();
  const port = await freePort();
  const webUrl = `http://127.0.0.1:${port}`;
  const common = ["--origin", webUrl, "--data", dataDir, "--name", name];
  const env: Record<string, string> = {
    POSTGRES_URL,
    QUEUE_CONCURRENCY: String(concurrency),
    API_TOKEN: "bench",
  };
  if (prefetch !== "") env.QUEUE_PREFETCH = prefetch;
  const web = await startRole([
    "--role",
    "web",
    "--port",
    String(port),
    "--user",
    "alice",
    ...common,
  ], env);
  const children = [web];
  for (let i = 0; i < workers; i++) {
    children.push(await startRole(["--role", "worker", ...common], env));
  }
  try {
    // One note to warm up (keys, connections), then the timed ones.
    await post(webUrl, "warm-up");
    await sink.until(FOLLOWERS);
    const started = performance.now();
    for (let i = 0; i < NOTES; i++) await post(webUrl, `note ${i}`);
    await sink.until(FOLLOWERS * (NOTES + 1));
    const seconds = (performance.now() - started) / 1000;
    const stops = await Promise.all(children.map(stop));
    return {
      workers,
      concurrency,
      prefetch: prefetch === "" ? "default" : prefetch,
      deliveriesPerSecond: (FOLLOWERS * NOTES) / seconds,
      stopMs: stops.map((s) => s.ms),
      codes: stops.map((s) => s.code),
    };
  } finally {
    for (const child of children) if (child.exitCode == null) child.kill("SIGKILL");
    await sink.close();
    await rm(dataDir, { recursive: true, force: true });
    const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
    await sql.unsafe(`DROP TABLE IF EXISTS microblog_${name}_queue, microblog_${name}_kv`);
    await sql.end();
  }
}

console.log(
  `${FOLLOWERS} followers, ${NOTES} notes a run (${FOLLOWERS * NOTES} deliveries), ` +
    `${TRIALS} trial(s), inboxes answering after ${LATENCY_MS} ms, ` +
    `on ${navigator.hardwareConcurrency} cores`,
);
console.log(
  "| workers | concurrency | prefetch | deliveries/s | SIGTERM to exit (web, workers…) | exit codes |",
);
console.log(
  "| ------- | ----------- | -------- | ------------ | ------------------------------- | ---------- |",
);
for (let trial = 0; trial < TRIALS; trial++) {
  for (const prefetch of PREFETCHES.length === 0 ? [""] : PREFETCHES) {
    for (const concurrency of CONCURRENCIES) {
      for (const workers of WORKERS) {
        const result = await measure(workers, concurrency, prefetch);
        console.log(
          `| ${workers} | ${concurrency} | ${result.prefetch} | ` +
            `${result.deliveriesPerSecond.toFixed(1)} | ` +
            `${result.stopMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")} | ` +
            `${result.codes.join(", ")} |`,
        );
      }
    }
  }
}
