// `npm run demo`: two microblog servers on loopback ports, each with its
// own SQLite files, play the scenario and print each step as it happens;
// exits 0 when all happened.  `npm run demo -- --serve` then keeps both
// running for a browser.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { configure, getConsoleSink } from "@logtape/logtape";
import { type Instance, startInstance } from "./instance.ts";
import { runScenario } from "./scenario.ts";

/** Options for {@link startDemo}. */
export interface DemoOptions {
  /** Where the two servers keep their files. */
  readonly dataDir: string;
  /** @default `{ seconds: 3 }` */
  readonly welcomeDelaySeconds?: number;
  /** @default 10 */
  readonly digestEverySeconds?: number;
  /** `REDIS_URL`, `POSTGRES_URL`, `AMQP_URL`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly alicePort?: number;
  readonly bobPort?: number;
  /** The API token both servers take; a random one by default. */
  readonly apiToken?: string;
}

/** Two running servers and the page bob links to. */
export interface Demo extends AsyncDisposable {
  readonly alice: Instance;
  readonly bob: Instance;
  /** A loopback page with a <title>, for the link preview. */
  readonly linkUrl: string;
  readonly apiToken: string;
}

/** Serves a tiny page on loopback, standing in for a site a post links to. */
async function startLinkedPage(): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>Fedwork: typed tasks for the fediverse</title><p>Hello.</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/article`, server };
}

/** Starts alice's and bob's servers, each web and worker in one process. */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const apiToken = options.apiToken ?? crypto.randomUUID();
  const common = {
    apiToken,
    welcomeDelay: { seconds: options.welcomeDelaySeconds ?? 3 },
    digestEvery: { seconds: options.digestEverySeconds ?? 10 },
    env: options.env ?? {},
    pollIntervalMs: 50,
  };
  const page = await startLinkedPage();
  const alice = await startInstance({
    ...common,
    name: "alice",
    dataDir: join(options.dataDir, "alice"),
    users: ["alice"],
    port: options.alicePort ?? 0,
  });
  const bob = await startInstance({
    ...common,
    name: "bob",
    dataDir: join(options.dataDir, "bob"),
    users: ["bob"],
    port: options.bobPort ?? 0,
  });
  return {
    alice,
    bob,
    linkUrl: page.url,
    apiToken,
    async [Symbol.asyncDispose]() {
      await Promise.all([alice[Symbol.asyncDispose](), bob[Symbol.asyncDispose]()]);
      page.server.closeAllConnections();
      await new Promise<void>((resolve) => page.server.close(() => resolve()));
    },
  };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const serve = args.includes("--serve");
  const dataIndex = args.indexOf("--data");
  const dataDir = dataIndex >= 0
    ? args[dataIndex + 1]
    : await mkdtemp(join(tmpdir(), "fedwork-microblog-demo-"));
  // Workers' warnings and errors only: the steps are the demo's output.
  await configure({
    sinks: { console: getConsoleSink() },
    loggers: [
      { category: ["fedwork"], sinks: ["console"], lowestLevel: "warning" },
      { category: ["logtape", "meta"], sinks: ["console"], lowestLevel: "warning" },
    ],
  });
  const started = performance.now();
  const print = (ms: number, message: string) =>
    process.stdout.write(`[${(ms / 1000).toFixed(2).padStart(6)} s] ${message}\n`);
  // Stable ports to bookmark when serving; free ones for a one-off run.
  const port = (name: string, fallback: number) =>
    Number(process.env[name] ?? (serve ? fallback : 0));
  let demo: Demo;
  try {
    demo = await startDemo({
      dataDir,
      env: process.env,
      alicePort: port("ALICE_PORT", 8001),
      bobPort: port("BOB_PORT", 8002),
      ...(process.env.API_TOKEN ? { apiToken: process.env.API_TOKEN } : {}),
    });
  } catch (error) {
    const busy = (error as { code?: string }).code === "EADDRINUSE";
    process.stderr.write(
      busy
        ? `demo: port ${(error as { port?: number }).port} is taken; ` +
          "set ALICE_PORT and BOB_PORT to free ones.\n"
        : `demo: could not start: ${error instanceof Error ? error.message : error}\n`,
    );
    if (dataIndex < 0) await rm(dataDir, { recursive: true, force: true });
    return 1;
  }
  print(
    performance.now() - started,
    `alice at ${demo.alice.url.href}users/alice (${demo.alice.backends})`,
  );
  print(
    performance.now() - started,
    `bob   at ${demo.bob.url.href}users/bob (${demo.bob.backends})`,
  );
  let failed = false;
  try {
    const offset = performance.now() - started;
    await runScenario({
      alice: { origin: demo.alice.url, name: "alice", apiToken: demo.apiToken },
      bob: { origin: demo.bob.url, name: "bob", apiToken: demo.apiToken },
      linkUrl: demo.linkUrl,
      onStep: (ms, message) => print(offset + ms, message),
    });
    print(performance.now() - started, "all steps done");
  } catch (error) {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : error}\n`);
    failed = true;
  }
  if (serve && !failed) {
    process.stdout.write(
      `\nServing until Ctrl-C (data in ${dataDir}). Open in a browser:\n` +
        `  ${demo.alice.url.href}users/alice\n  ${demo.bob.url.href}users/bob\n` +
        `  ${demo.alice.url.href}  ${demo.bob.url.href}  (home pages, with the last digest)\n` +
        `The API takes the token ${demo.apiToken}` +
        `${process.env.API_TOKEN ? " (from API_TOKEN)" : " (set API_TOKEN to choose it)"}, e.g.\n` +
        `  curl -H 'Authorization: Bearer ${demo.apiToken}' ${demo.alice.url.href}api/users/alice\n`,
    );
    await new Promise<void>((resolve) => {
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
  }
  await demo[Symbol.asyncDispose]();
  if (dataIndex < 0) await rm(dataDir, { recursive: true, force: true });
  return failed ? 1 : 0;
}

if ((import.meta as { main?: boolean }).main ?? process.argv[1]?.endsWith("demo.ts")) {
  process.exit(await main());
}
