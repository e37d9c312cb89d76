import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { FederationOptionError } from "../../federation/errors.ts";
import { createFederation } from "../../federation/federation.ts";
import { Accept, Create, Note, TentativeAccept } from "@fedify/vocab";
import type { KvKey, KvStoreSetOptions } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { publishStepActivity } from "./activities.ts";
import { ACTIVITY_WAITS_MAX_AGE_MS, ActivityWaitRegistry } from "./activity-waits.ts";

/** A store that counts its reads and writes. */
class CountingKvStore extends MemoryKvStore {
  reads = 0;
  writes = 0;

  override get<T = unknown>(key: KvKey): Promise<T | undefined> {
    this.reads++;
    return super.get<T>(key);
  }

  override set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    this.writes++;
    return super.set(key, value, options);
  }

  override cas(
    key: KvKey,
    expected: unknown,
    value: unknown,
    options?: KvStoreSetOptions,
  ): Promise<boolean> {
    this.writes++;
    return super.cas(key, expected, value, options);
  }
}

const signer = "https://remote.example/users/alice";

function acceptOf(type: typeof Accept | typeof TentativeAccept = Accept): Accept {
  return new type({
    id: new URL("https://remote.example/accepts/1"),
    actor: new URL(signer),
    object: new URL("https://local.example/follows/1"),
  });
}

const noWake = () => Promise.resolve();

function manualClock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

test("an inbox in a federation where no task waits for activities writes nothing for one", async () => {
  const kv = new CountingKvStore();
  const waits = new ActivityWaitRegistry(kv, []);
  for (let i = 0; i < 5; i++) {
    assertEquals(await publishStepActivity(kv, noWake, acceptOf(), signer, waits), 0);
  }
  // The registry, read once: its answer holds for a second.
  assertEquals([kv.writes, kv.reads], [0, 1]);
});

test("a declared activity class is kept from the first activity, its subclasses too, others not", async () => {
  const kv = new CountingKvStore();
  const waits = new ActivityWaitRegistry(kv, [Accept.typeId.href]);
  await publishStepActivity(kv, noWake, acceptOf(), signer, waits);
  // Under (type, actor), (type, object) and (type, object, actor).
  assertEquals([kv.writes, kv.reads], [3, 3]);
  await publishStepActivity(kv, noWake, acceptOf(TentativeAccept), signer, waits);
  // TentativeAccept and Accept, three keys each.
  assertEquals(kv.writes, 9);
  const create = new Create({
    id: new URL("https://remote.example/creates/1"),
    actor: new URL(signer),
    object: new Note({ id: new URL("https://remote.example/notes/1") }),
  });
  await publishStepActivity(kv, noWake, create, signer, waits);
  assertEquals(kv.writes, 9);
});

test("a wait that starts registers its class, which inboxes keep once their read of the registry ages", async () => {
  const kv = new CountingKvStore();
  const clock = manualClock();
  const inbox = new ActivityWaitRegistry(kv, [], clock);
  const worker = new ActivityWaitRegistry(kv, [], clock);
  assertEquals(await inbox.waited([Accept.typeId.href]), false);
  await worker.register(Accept.typeId.href, Date.now() + 60_000);
  // The worker's own process knows at once; another within the bound.
  assertEquals(worker.waited([Accept.typeId.href]), true);
  assertEquals(inbox.waited([Accept.typeId.href]), false);
  clock.advance(ACTIVITY_WAITS_MAX_AGE_MS);
  assertEquals(await inbox.waited([Accept.typeId.href]), true);
  assertEquals(await inbox.waited([Create.typeId.href]), false);
  // A second wait in the same process writes nothing.
  const writes = kv.writes;
  await worker.register(Accept.typeId.href, Date.now() + 60_000);
  assertEquals(kv.writes, writes);
});

test("a declared class is never registered in the store", async () => {
  const kv = new CountingKvStore();
  const worker = new ActivityWaitRegistry(kv, [Accept.typeId.href]);
  await worker.register(Accept.typeId.href, Date.now() + 60_000);
  assertEquals([kv.reads, kv.writes], [0, 0]);
});

test("the waitedActivities option takes activity classes of @fedify/vocab only, naming itself", () => {
  const error = assertThrows(
    () => createFederation<void>({ kv: new MemoryKvStore(), waitedActivities: [Note as never] }),
    FederationOptionError,
  );
  assertEquals(error.message.includes("waitedActivities"), true);
  createFederation<void>({ kv: new MemoryKvStore(), waitedActivities: [Accept] });
});
