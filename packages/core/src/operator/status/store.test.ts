import { assertEquals, assertRejects, test } from "@fedify/fixture";
import type { KvKey, KvStoreSetManyEntry, KvStoreSetOptions } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { decodeTaskUpdate, encodeTaskUpdate, type TaskStatus, TaskStatusStore } from "./store.ts";

/** A store that counts its writes, one by one and batched. */
class CountingKvStore extends MemoryKvStore {
  sets = 0;
  batches: number[] = [];

  override set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    this.sets++;
    return super.set(key, value, options);
  }

  override setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    this.batches.push(entries.length);
    return super.setMany(entries);
  }
}

function status(id: string, state: TaskStatus["state"]): TaskStatus {
  return { id, name: "import", state, attempt: 0, updatedAt: new Date() };
}

test("TaskStatusStore writes the first record of a turn at once and the rest with one setMany()", async () => {
  const kv = new CountingKvStore();
  const store = new TaskStatusStore(kv);
  await Promise.all([
    store.set(status("a", "completed"), 60_000),
    store.set(status("b", "failed"), 60_000),
    // A few awaits later, as an outcome listener of a task that finished
    // on the same reply would.
    (async () => {
      await null;
      await null;
      await store.set(status("c", "completed"), 60_000);
    })(),
  ]);
  assertEquals(kv.sets, 1);
  assertEquals(kv.batches, [2]);
  assertEquals((await store.get("b"))?.state, "failed");
  assertEquals((await store.get("c"))?.state, "completed");
  await store.set(status("d", "running"), 60_000);
  assertEquals([kv.sets, kv.batches], [2, [2]]);
  assertEquals((await store.get("d"))?.state, "running");
});

test("TaskStatusStore writes to a MemoryKvStore itself at once, with no promise", async () => {
  const kv = new MemoryKvStore();
  // Watched on the instance: a subclass would not be a MemoryKvStore itself.
  kv.set = () => Promise.reject(new Error("set() should not be called"));
  kv.setMany = () => Promise.reject(new Error("setMany() should not be called"));
  const store = new TaskStatusStore(kv);
  assertEquals(store.write(status("a", "completed"), 60_000), undefined);
  await Promise.all(["b", "c"].map((id) => store.set(status(id, "failed"), 60_000)));
  assertEquals((await store.get("a"))?.state, "completed");
  assertEquals((await store.get("c"))?.state, "failed");
  // A value the store cannot copy still rejects, as set() would.
  await assertRejects(
    () => store.set({ ...status("d", "completed"), result: () => {} }, 60_000),
    Error,
  );
});

test("TaskStatusStore keeps a MemoryKvStore record apart from the result and progress it was given", async () => {
  const store = new TaskStatusStore(new MemoryKvStore());
  const result = { sizes: [1, 2] };
  const data = { step: "resize" };
  store.write(
    { ...status("a", "completed"), result, progress: { percent: 50, data, at: new Date(0) } },
    60_000,
  );
  // Changed by the handler after it returned: not by the record.
  result.sizes.push(3);
  data.step = "upload";
  const read = await store.get("a");
  assertEquals(read?.result, { sizes: [1, 2] });
  assertEquals(read?.progress?.data, { step: "resize" });
  // A record of primitives alone reads back field for field.
  const plain = {
    ...status("b", "failed"),
    error: { name: "Error", message: "boom" },
    reason: "exhausted",
  };
  store.write(plain, 60_000);
  assertEquals(await store.get("b"), plain);
});

test("TaskStatusStore reads a record written before 0.4.0, whose error was one string", async () => {
  const kv = new MemoryKvStore();
  const store = new TaskStatusStore(kv);
  const old = (id: string, error: string) => ({
    id,
    name: "import",
    state: "failed",
    attempt: 2,
    error,
    updatedAt: new Date(0).toISOString(),
  });
  await kv.set(["fedwork", "task-status", "a"], old("a", "TypeError: disk full: /tmp"));
  await kv.set(["fedwork", "task-status", "b"], old("b", "not a Fedwork message"));
  assertEquals((await store.get("a"))?.error, { name: "TypeError", message: "disk full: /tmp" });
  assertEquals((await store.get("b"))?.error, { name: "Error", message: "not a Fedwork message" });
  const update = decodeTaskUpdate(
    JSON.stringify({ id: "a", kind: "state", status: old("a", "RangeError: too big") }),
  );
  assertEquals(update?.status.error, { name: "RangeError", message: "too big" });
});

test("TaskStatusStore rejects each write of a batch that setMany() failed", async () => {
  const kv = new CountingKvStore();
  kv.setMany = () => Promise.reject(new Error("the store is down"));
  const store = new TaskStatusStore(kv);
  const first = store.set(status("a", "completed"), 1_000);
  const batched = [store.set(status("b", "failed"), 1), store.set(status("c", "dropped"), 1)];
  await first;
  for (const write of batched) await assertRejects(() => write, Error, "the store is down");
});

test("TaskStatusStore writes one by one on a store without setMany()", async () => {
  const inner = new MemoryKvStore();
  let sets = 0;
  const store = new TaskStatusStore({
    get: (key) => inner.get(key),
    set: (key, value, options) => (sets++, inner.set(key, value, options)),
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
  });
  await Promise.all([store.set(status("a", "queued"), 1_000), store.set(status("b", "queued"), 1)]);
  assertEquals(sets, 2);
  assertEquals((await store.get("a"))?.state, "queued");
});

test("encodeTaskUpdate() writes each record's own time, whether or not it repeats the last", () => {
  const at = (iso: string): TaskStatus => ({
    id: "t",
    name: "n",
    state: "completed",
    attempt: 0,
    updatedAt: new Date(iso),
  });
  const times = [
    "2026-11-27T06:00:00.000Z",
    "2026-11-27T06:00:00.000Z",
    "2026-11-27T06:00:00.001Z",
    "2026-11-27T06:00:00.000Z",
  ];
  const written = times.map((iso) =>
    (JSON.parse(encodeTaskUpdate({ id: "t", kind: "state", status: at(iso) })) as {
      status: { updatedAt: string };
    }).status.updatedAt
  );
  assertEquals(written, times);
  assertEquals(
    decodeTaskUpdate(encodeTaskUpdate({ id: "t", kind: "state", status: at(times[2]) }))
      ?.status.updatedAt.toISOString(),
    times[2],
  );
});
