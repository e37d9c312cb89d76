// What a verified inbox activity costs the key–value store for
// `waitForActivity()` (not a test): hands N verified Accepts to the step
// that the inbox calls once a signature checks out, on a SqliteKvStore
// wrapped to count its calls, (a) as 0.4 before issue 43's change did for
// every activity, (b) in a federation where no wait can need it, and
// (c) with Accept declared in `waitedActivities`.  Prints the store calls
// and the time per activity of each.
//
// Usage: node -C fedwork-source bench/inbox-activity-waits.ts [--activities N]
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { Accept } from "@fedify/vocab";
import type { KvKey, KvStore, KvStoreSetOptions } from "@fedwork/core";
import { SqliteKvStore } from "@fedwork/sqlite";
import { publishStepActivity } from "../packages/core/src/tasks/steps/activities.ts";
import { ActivityWaitRegistry } from "../packages/core/src/tasks/steps/activity-waits.ts";

const { values: args } = parseArgs({
  options: { activities: { type: "string", default: "300" } },
});
const N = Number(args.activities);

/** Counts the calls that reach the store. */
function counting(store: KvStore) {
  const counts = { reads: 0, writes: 0 };
  const kv: KvStore = {
    get: <T>(key: KvKey) => (counts.reads++, store.get<T>(key)),
    set: (key: KvKey, value: unknown, options?: KvStoreSetOptions) => (
      counts.writes++, store.set(key, value, options)
    ),
    delete: (key: KvKey) => (counts.writes++, store.delete(key)),
    list: (prefix?: KvKey) => store.list(prefix),
  };
  return { kv, counts };
}

async function run(label: string, waits: (kv: KvStore) => ActivityWaitRegistry | undefined) {
  const path = join(tmpdir(), `fedwork-inbox-waits-${crypto.randomUUID()}.sqlite`);
  const store = new SqliteKvStore({ path });
  const { kv, counts } = counting(store);
  const registry = waits(kv);
  const signer = "https://remote.example/users/alice";
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    const accept = new Accept({
      id: new URL(`https://remote.example/accepts/${i}`),
      actor: new URL(signer),
      object: new URL(`https://local.example/follows/${i}`),
    });
    await publishStepActivity(kv, () => Promise.resolve(), accept, signer, registry);
  }
  const ms = (performance.now() - started) / N;
  await store[Symbol.asyncDispose]();
  await Promise.all(["", "-wal", "-shm"].map((s) => rm(path + s, { force: true })));
  console.log(
    `| ${label} | ${(counts.writes / N).toFixed(2)} | ${(counts.reads / N).toFixed(3)} | ` +
      `${ms.toFixed(3)} ms |`,
  );
}

console.log(`${N} verified Accepts, SqliteKvStore; per activity:`);
console.log("| inbox | KV writes | KV reads | time |");
console.log("| --- | --- | --- | --- |");
await run("every activity kept (before)", () => undefined);
await run("no wait in the federation", (kv) => new ActivityWaitRegistry(kv, []));
await run("Accept declared", (kv) => new ActivityWaitRegistry(kv, [Accept.typeId.href]));
process.exit(0);
