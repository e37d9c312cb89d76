// What a hostile peer costs a Fedwork server, before and after the
// outgoing-HTTP limits: peak memory (RSS above the idle size) while a
// 256 MiB key document or error body is refused, and how long a worker
// slot stays held by a server that trickles one byte at a time.  "naive"
// is what Fedwork did before (fetch() and read the body whole, no time
// limit); "fedwork" is fetchRemote() with its defaults.
//
// Usage: node -C fedwork-source bench/hostile-peers.ts [--size smoke|full] [--documents]
//        deno run -A bench/hostile-peers.ts      bun bench/hostile-peers.ts
import process from "node:process";
import {
  createFederation,
  createFetchDocumentLoader,
  createPublicKeyFetcher,
  deliverSignedActivity,
  generateCryptoKeyPair,
  InProcessMessageQueue,
  MemoryKvStore,
} from "@fedwork/core";
import { startHostileServer } from "../packages/core/src/activitypub/network/testdata/hostile-server.ts";

const MiB = 1024 * 1024;
const full = !process.argv.includes("smoke") && !process.argv.includes("--smoke");
// --documents runs only the remote-document section (5).
const documentsOnly = process.argv.includes("--documents");
const bodyBytes = full ? 256 * MiB : 32 * MiB;

/** Runs `body`, sampling RSS; returns the peak above the size before it. */
async function peakRss<T>(body: () => Promise<T>): Promise<{ peakMiB: number; ms: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => peak = Math.max(peak, process.memoryUsage().rss), 2);
  const started = performance.now();
  try {
    await body().catch(() => {});
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return { peakMiB: (peak - before) / MiB, ms: performance.now() - started };
}

const rows: string[][] = [["scenario", "variant", "peak RSS over idle (MiB)", "time (ms)"]];
const record = (scenario: string, variant: string, r: { peakMiB: number; ms: number }) =>
  rows.push([scenario, variant, r.peakMiB.toFixed(1), r.ms.toFixed(0)]);

// 1. An unauthenticated inbox POST whose keyId serves a huge document.
if (!documentsOnly) {
  await using server = await startHostileServer({
    kind: "huge",
    totalBytes: bodyBytes,
    declareLength: false,
  });
  const keyId = new URL("/key#main-key", server.url);
  const fedwork = createPublicKeyFetcher({
    kv: new MemoryKvStore(),
    documentLoader: createFetchDocumentLoader({ userAgent: "bench", allowPrivateAddress: true }),
  });
  record("key document", "fedwork", await peakRss(() => fedwork(keyId)));
  record(
    "key document",
    "naive",
    await peakRss(async () => await (await fetch(new URL("/key", server.url))).json()),
  );
}

// 2. A delivery to an inbox answering 500 with a huge error body.
if (!documentsOnly) {
  await using server = await startHostileServer({
    kind: "huge",
    totalBytes: bodyBytes,
    declareLength: false,
    status: 500,
    contentType: "text/plain",
  });
  const { privateKey } = await generateCryptoKeyPair();
  const inbox = new URL("/inbox", server.url);
  record(
    "delivery error body",
    "fedwork",
    await peakRss(() =>
      deliverSignedActivity({
        activity: { type: "Follow" },
        inbox,
        keys: [{ keyId: new URL("https://example.com/users/a#main-key"), privateKey }],
        kv: new MemoryKvStore(),
        allowPrivateAddress: true,
      })
    ),
  );
  record(
    "delivery error body",
    "naive",
    await peakRss(async () =>
      (await (await fetch(inbox, { method: "POST", body: "{}" })).text()).slice(0, 512)
    ),
  );
}

// 3. A document on a server that trickles a byte every 100 ms: how long the
// worker slot is held (naive: until the server stops; capped here at 20 s).
if (!documentsOnly) {
  await using server = await startHostileServer({ kind: "trickle", intervalMs: 100 });
  const load = createFetchDocumentLoader({
    userAgent: "bench",
    allowPrivateAddress: true,
    timeout: { seconds: full ? 10 : 1 },
  });
  record("trickled document", "fedwork", await peakRss(() => load(server.url.href)));
  record(
    "trickled document",
    "naive (stopped at 20 s)",
    await peakRss(async () =>
      await (await fetch(server.url, { signal: AbortSignal.timeout(full ? 20_000 : 2_000) }))
        .text()
    ),
  );
}

// 4. The queue-freeze scenario: one worker slot, a task stuck on the
// trickling server, a second task queued behind it.  How long after the
// stuck one's time limit the second completes.
if (!documentsOnly) {
  await using server = await startHostileServer({ kind: "trickle", intervalMs: 100 });
  await using queue = new InProcessMessageQueue();
  const limitMs = full ? 10_000 : 1_000;
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    remoteRequests: { timeout: { milliseconds: limitMs } },
  });
  let secondDone!: () => void;
  const second = new Promise<void>((resolve) => secondDone = resolve);
  const task = federation.defineTask("look-up", {
    schema: { "~standard": { version: 1, vendor: "bench", validate: (value) => ({ value }) } },
    async handler(ctx, url: unknown) {
      if (typeof url === "string") await ctx.lookupObject(url);
      else secondDone();
    },
  });
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const started = performance.now();
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  await ctx.enqueueTask(task, server.url.href);
  await ctx.enqueueTask(task, null);
  await second;
  const ms = performance.now() - started;
  controller.abort();
  await workers;
  rows.push([
    "queue freeze",
    `limit ${limitMs} ms`,
    "",
    `${ms.toFixed(0)} (${(ms - limitMs).toFixed(0)} after the limit)`,
  ]);
}

// 5. Remote documents made to be expensive to process, each in a process
// of its own (bench/hostile-document-child.ts) so that its peak memory is
// its own: the context bomb and the scoped-context multiplier through an
// inbox (fedwork) against plain JSON-LD parsing (naive); the largest
// documents of each shape the default limits accept; real servers'
// documents; Linked Data signatures at their 2,000-value limit.  The naive
// bomb runs with a 1 GiB heap on Node.js and Deno, where it dies past
// n = 6,000 (Bun has no heap cap: it is run only at n = 3,000).
{
  const runtimeCommand = (): { command: string; args: string[] } => {
    if ("Deno" in globalThis) {
      const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
      return {
        command: deno.execPath(),
        args: ["run", "-A", "--v8-flags=--max-old-space-size=1024"],
      };
    }
    if ("Bun" in globalThis) {
      return { command: process.execPath, args: ["--conditions=fedwork-source"] };
    }
    return {
      command: process.execPath,
      args: ["--conditions=fedwork-source", "--expose-gc", "--max-old-space-size=1024"],
    };
  };
  const { spawnSync } = await import("node:child_process");
  const child = new URL("./hostile-document-child.ts", import.meta.url).pathname;
  const bun = "Bun" in globalThis;
  const cases: [string, string][] = [
    ["bomb-3000", "naive"],
    ...(full && !bun
      ? [["bomb-6000", "naive"], ["bomb-12000", "naive"]] as [string, string][]
      : []),
    ["bomb-3000", "inbox"],
    ["bomb-12000", "inbox"],
    ["scoped-1600", "naive"],
    ["scoped-1600", "inbox"],
    ["limit-values", "inbox"],
    ["limit-strings", "inbox"],
    ["limit-contexts", "inbox"],
    ["limit-deep", "inbox"],
    ["limit-scoped", "inbox"],
    ["limit-string-length", "inbox"],
    ["ld-limit-strings", "ld-signature"],
    ["ld-limit-values", "ld-signature"],
    ["limit-strings", "ld-signature"],
    ["real Mastodon Create (LD-signed)", "lookup"],
    ["real Mastodon outbox page (20 items)", "lookup"],
    ["real Misskey Create", "lookup"],
    ["real GoToSocial Create", "lookup"],
    ["real Fedify actor", "lookup"],
  ];
  const { command, args } = runtimeCommand();
  for (const [name, variant] of cases) {
    const result = spawnSync(command, [...args, child, name, variant], {
      encoding: "utf8",
      timeout: 300_000,
    });
    const line = result.stdout.trim().split("\n").pop() ?? "";
    let measured: { kib: number; cpuMs: number; peakMiB: number; outcome: string } | undefined;
    try {
      measured = JSON.parse(line);
    } catch {
      // Killed (out of memory) or timed out: what the process said last.
    }
    rows.push([
      `document: ${name} (${measured?.kib ?? "?"} KiB)`,
      variant,
      measured == null ? "(process died)" : measured.peakMiB.toFixed(1),
      measured == null
        ? `exit ${result.status ?? result.signal}: ${result.stderr.trim().split("\n").pop()}`
        : `${measured.cpuMs} CPU: ${measured.outcome}`,
    ]);
  }
}

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
console.log(`# hostile peers on ${runtime}, ${bodyBytes / MiB} MiB bodies`);
for (const row of rows) console.log(row.join(" | "));
