// Redis Cluster specifics the conformance suites do not single out: every
// Lua script is sent with keys of one slot (a script whose keys span slots
// is refused by the cluster with CROSSSLOT, which the control test shows),
// and RedisKvStore's list() finds keys on every master.
import { assert, assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import type { MessageRedelivery } from "@fedwork/core";
import type { Cluster } from "ioredis";
import { RedisKvStore } from "./kv-store.ts";
import { RedisMessageQueue } from "./message-queue.ts";
import { kvCasLua } from "./scripts/kv-cas.lua.ts";
import { LuaScript } from "./scripts/lua-script.ts";
import {
  claimScript,
  depthScript,
  enqueueDeduplicatedScript,
  enqueueScript,
  heartbeatScript,
  redeliverScript,
} from "./scripts/message-queue.ts";
import { createCluster, deleteClusterKeys } from "./testdata/cluster-factory.ts";

function namespace(): string {
  return `fedwork-test-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** One script call seen on the client: the script's SHA1 and its keys. */
interface ScriptCall {
  readonly sha1: string;
  readonly keys: string[];
}

/**
 * A cluster client that records the keys of every EVALSHA and EVAL sent on
 * it (and still sends them: the cluster itself refuses keys across slots).
 */
async function recordingCluster(calls: ScriptCall[]): Promise<Cluster> {
  const cluster = createCluster();
  await cluster.ping();
  const record = (sha1: string, args: unknown[]) => {
    const count = Number(args[0]);
    calls.push({ sha1, keys: args.slice(1, 1 + count).map(String) });
  };
  const evalsha = cluster.evalsha.bind(cluster) as (...args: unknown[]) => Promise<unknown>;
  const evalScript = cluster.eval.bind(cluster) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(cluster, {
    evalsha: (sha1: string, ...args: unknown[]) => {
      record(sha1, args);
      return evalsha(sha1, ...args);
    },
    eval: (source: string, ...args: unknown[]) => {
      record(new LuaScript(source).sha1, args);
      return evalScript(source, ...args);
    },
  });
  return cluster;
}

test("a Lua script whose keys span two slots is refused by the cluster (control)", async () => {
  const cluster = createCluster();
  try {
    // Without a shared hash tag, "a" and "b" hash to different slots.
    await assertRejects(
      () => cluster.eval("return redis.call('MGET', KEYS[1], KEYS[2])", 2, "a", "b"),
      Error,
      "CROSSSLOT",
    );
  } finally {
    await cluster.quit();
  }
});

test("every Lua script of RedisMessageQueue and RedisKvStore runs with keys of one slot", async () => {
  const calls: ScriptCall[] = [];
  const cluster = await recordingCluster(calls);
  const name = namespace();
  const queue = new RedisMessageQueue({
    client: cluster,
    queue: name,
    // A short lease, so that the heartbeat runs while the handler waits.
    leaseTime: { milliseconds: 600 },
    heartbeatInterval: { milliseconds: 100 },
  });
  const kv = new RedisKvStore({ client: cluster, prefix: name });
  const controller = new AbortController();
  try {
    await queue.enqueue({ n: 1 });
    await queue.enqueueMany([{ n: 2 }, { n: 3 }], { orderingKey: "k" });
    await queue.enqueue({ n: 4 }, { delay: { milliseconds: 200 } });
    assert(
      await queue.enqueueDeduplicated({ n: 5 }, {
        deduplicationKey: "d",
        deduplicationTtl: { minutes: 1 },
      }),
    );
    assertEquals((await queue.getDepth()).queued, 5);
    const seen = new Set<number>();
    const all = deferred();
    let redelivered = false;
    const listening = queue.listen(
      async (message: { n: number }, redelivery?: MessageRedelivery) => {
        if (message.n === 1 && !redelivered) {
          redelivered = true;
          // Longer than the heartbeat interval, then a redelivery.
          await new Promise((resolve) => setTimeout(resolve, 300));
          await redelivery!.redeliver({ n: 1 }, { delay: { milliseconds: 50 } });
          return;
        }
        seen.add(message.n);
        if (seen.size === 5) all.resolve();
      },
      { signal: controller.signal },
    );
    await within(all.promise, "every message to be handled on the cluster", 30_000);
    controller.abort();
    await listening;
    assert(await kv.cas(["c"], undefined, 1));
    const used = new Set(calls.map((call) => call.sha1));
    for (
      const [label, script] of Object.entries({
        enqueueScript,
        enqueueDeduplicatedScript,
        claimScript,
        redeliverScript,
        heartbeatScript,
        depthScript,
        cas: new LuaScript(kvCasLua),
      })
    ) {
      assert(used.has(script.sha1), `${label} was not run by the scenario`);
    }
    for (const call of calls) {
      const slots = new Set<number>();
      for (const key of call.keys) slots.add(Number(await cluster.cluster("KEYSLOT", key)));
      assertEquals(slots.size, 1, `keys ${call.keys.join(", ")} span ${slots.size} slots`);
    }
  } finally {
    controller.abort();
    await queue[Symbol.asyncDispose]();
    await kv[Symbol.asyncDispose]();
    await deleteClusterKeys(`{fedwork:${name}}`);
    await deleteClusterKeys(`${name}:`);
    await cluster.quit();
  }
});

test("RedisMessageQueue on a cluster counts hand-outs until redeliver() resets the count", async () => {
  const name = namespace();
  const queue = new RedisMessageQueue({
    createClient: createCluster,
    queue: name,
    redeliveryDelay: { milliseconds: 50 },
  });
  const controller = new AbortController();
  try {
    const counts: (number | undefined)[] = [];
    const done = deferred();
    const listening = queue.listen(async (message: string, redelivery?: MessageRedelivery) => {
      counts.push(redelivery?.deliveryCount);
      if (message === "v1" && counts.length < 3) throw new Error("Failing on purpose.");
      if (message === "v1") {
        await redelivery!.redeliver("v2", { delay: { milliseconds: 0 } });
        return;
      }
      done.resolve();
    }, { signal: controller.signal });
    await queue.enqueue("v1");
    await within(done.promise, "the redelivered version on the cluster", 30_000);
    controller.abort();
    await listening;
    assertEquals(counts, [1, 2, 3, 1]);
  } finally {
    controller.abort();
    await queue[Symbol.asyncDispose]();
    await deleteClusterKeys(`{fedwork:${name}}`);
  }
});

test("RedisKvStore list() on a cluster finds the keys of every master", async () => {
  const prefix = namespace();
  const cluster = createCluster();
  await using kv = new RedisKvStore({ client: cluster, prefix });
  try {
    for (let i = 0; i < 60; i++) await kv.set(["item", String(i)], i);
    // The keys really are spread: more than one master holds some.
    const holders = new Set<string>();
    const ranges: SlotRange[] = await cluster.cluster("SLOTS");
    for (let i = 0; i < 60; i++) {
      const slot = Number(await cluster.cluster("KEYSLOT", `${prefix}:kv:["item","${i}"]`));
      holders.add(nodeOfSlot(ranges, slot));
    }
    assert(holders.size > 1, `all 60 keys landed on one master: ${[...holders]}`);
    const listed: number[] = [];
    for await (const entry of kv.list(["item"])) listed.push(entry.value as number);
    assertEquals(listed.sort((a, b) => a - b), Array.from({ length: 60 }, (_, i) => i));
  } finally {
    await deleteClusterKeys(`${prefix}:`);
    await cluster.quit();
  }
});

/** A CLUSTER SLOTS entry: first slot, last slot, then the nodes, master first. */
type SlotRange = [number, number, ...[string, number, ...unknown[]][]];

function nodeOfSlot(ranges: SlotRange[], slot: number): string {
  const range = ranges.find(([first, last]) => first <= slot && slot <= last);
  if (range == null) throw new Error(`No node serves slot ${slot}.`);
  const master = range[2] as [string, number];
  return `${master[0]}:${master[1]}`;
}
