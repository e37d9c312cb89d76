// Measures what the lease listener's `prefetch` option buys on SQLite and
// PostgreSQL (not a test): drain throughput of a backlog at concurrency 1,
// 10 and 50 with prefetch 0, 4, 16, 64 and 256, each fixed (PostgreSQL's
// adaptive prefetch is turned off with `maxPrefetch` equal to `prefetch`).
// Every trial runs each setting once, in a rotating order, and the table
// shows the median of the trials and the ratio to prefetch 0.  The numbers
// chose the default prefetch of SqliteMessageQueue and PostgresMessageQueue
// (see docs/manual).
//
// Usage: node -C fedwork-source bench/lease-prefetch.ts [--trials 3]
//          [--sqlite-messages 5000] [--postgres-messages 3000] [--only sqlite|postgres]
//   (PostgreSQL at POSTGRES_URL, postgres://postgres@127.0.0.1:5432/test by default)
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { MessageQueue } from "@fedwork/core";
import { PostgresMessageQueue } from "@fedwork/postgres";
import { SqliteMessageQueue } from "@fedwork/sqlite";

const args = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const index = args.indexOf(`--${name}`);
  return index < 0 ? fallback : Number(args[index + 1]);
}
const TRIALS = option("trials", 3);
const SQLITE_MESSAGES = option("sqlite-messages", 5_000);
const POSTGRES_MESSAGES = option("postgres-messages", 3_000);
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const PREFETCHES = [0, 4, 16, 64, 256];
const CONCURRENCIES = [1, 10, 50];

type Engine = "sqlite" | "postgres";

interface Setting {
  readonly engine: Engine;
  readonly concurrency: number;
  readonly prefetch: number;
}

/** Creates a queue on a fresh table; the returned cleanup drops it. */
function createQueue(
  setting: Setting,
): { queue: MessageQueue & AsyncDisposable; cleanup: () => Promise<void> } {
  const { engine, concurrency, prefetch } = setting;
  if (engine === "sqlite") {
    const path = join(tmpdir(), `fedwork-bench-${crypto.randomUUID()}.sqlite`);
    const queue = new SqliteMessageQueue({ path, concurrency, prefetch });
    return {
      queue,
      async cleanup() {
        await queue[Symbol.asyncDispose]();
        await Promise.all(["", "-wal", "-shm"].map((s) => rm(path + s, { force: true })));
      },
    };
  }
  const tableName = `fedwork_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const queue = new PostgresMessageQueue(POSTGRES_URL, {
    tableName,
    concurrency,
    prefetch,
    maxPrefetch: prefetch,
  });
  return {
    queue,
    async cleanup() {
      await queue.drop();
      await queue[Symbol.asyncDispose]();
    },
  };
}

/** Drains a backlog of `count` messages; returns messages per second. */
async function drain(setting: Setting, count: number): Promise<number> {
  const { queue, cleanup } = createQueue(setting);
  try {
    for (let i = 0; i < count; i += 1_000) {
      await queue.enqueueMany!(
        Array.from({ length: Math.min(1_000, count - i) }, (_, n) => ({ n: i + n })),
      );
    }
    const controller = new AbortController();
    let handled = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const start = performance.now();
    const listening = queue.listen(async () => {
      await Promise.resolve();
      if (++handled === count) done();
    }, { signal: controller.signal });
    await finished;
    const seconds = (performance.now() - start) / 1000;
    controller.abort();
    await listening;
    return count / seconds;
  } finally {
    await cleanup();
  }
}

function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const engines: Engine[] = only == null ? ["sqlite", "postgres"] : [only as Engine];
const settings: Setting[] = engines.flatMap((engine) =>
  CONCURRENCIES.flatMap((concurrency) =>
    PREFETCHES.map((prefetch) => ({ engine, concurrency, prefetch }))
  )
);
const results = new Map<Setting, number[]>(settings.map((setting) => [setting, []]));
for (let trial = 0; trial < TRIALS; trial++) {
  // Rotate the order so that no setting always runs first (or last).
  const order = settings.map((_, i) => settings[(i + trial * 3) % settings.length]);
  for (const setting of order) {
    const count = setting.engine === "sqlite" ? SQLITE_MESSAGES : POSTGRES_MESSAGES;
    const rate = await drain(setting, count);
    results.get(setting)!.push(rate);
    console.error(
      `trial ${trial + 1}: ${setting.engine} C=${setting.concurrency} ` +
        `prefetch=${setting.prefetch}: ${rate.toFixed(0)} msg/s`,
    );
  }
}

const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
console.log(
  `\nDrain of a backlog (${SQLITE_MESSAGES} SQLite / ${POSTGRES_MESSAGES} PostgreSQL ` +
    `messages), median of ${TRIALS} trials, ${runtime}:\n`,
);
console.log("| engine | concurrency | prefetch | msg/s | vs prefetch 0 | trials |");
console.log("|---|---|---|---|---|---|");
for (const setting of settings) {
  const rates = results.get(setting)!;
  const base = median(
    results.get(
      settings.find((s) =>
        s.engine === setting.engine && s.concurrency === setting.concurrency && s.prefetch === 0
      )!,
    )!,
  );
  console.log(
    `| ${setting.engine} | ${setting.concurrency} | ${setting.prefetch} | ` +
      `${median(rates).toFixed(0)} | ${(median(rates) / base).toFixed(2)}x | ` +
      `${rates.map((rate) => rate.toFixed(0)).join(", ")} |`,
  );
}
