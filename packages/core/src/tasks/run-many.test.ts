// The collector of handleMany items on its own: items that leave their
// group when their signal aborts, and signals no longer watched once the
// run has them.
import { assertEquals, assertRejects, type Deferred, deferred, test } from "@fedify/fixture";
import type { RegisteredTask } from "./definition.ts";
import type { TaskItem } from "./handle-many.ts";
import type { TaskMessage } from "./message.ts";
import type { TaskRunInfo } from "./run-info.ts";
import { TaskItemCollector, type TaskItemEntry } from "./run-many.ts";

const base = new URL("https://web.example/");

interface Run {
  readonly ids: string[];
  readonly items: readonly TaskItem<unknown>[];
  readonly done: Deferred<void>;
}

/** A collector of size `size` whose handler waits for each run's `done`. */
function collectorOf(size: number, runs: Run[]) {
  const task = {
    name: "many",
    maxResultBytes: 1024,
    handler: async (_ctx: unknown, items: readonly TaskItem<unknown>[]) => {
      const run: Run = { ids: items.map((item) => item.id), items, done: deferred<void>() };
      runs.push(run);
      await run.done.promise;
    },
  } as unknown as RegisteredTask<void, unknown>;
  return new TaskItemCollector<void, unknown>(task, { size, waitMs: 60_000 }, {
    createContext: () => ({}),
  });
}

function entryOf(id: string, signal: AbortSignal): TaskItemEntry<void> {
  const message = { id, attempt: 0, taskName: "many" } as unknown as TaskMessage;
  const info = { name: "many", id, attempt: 0, enqueuedAt: new Date(0) } as TaskRunInfo;
  return {
    message,
    data: { id },
    signal,
    workerSignal: new AbortController().signal,
    limitMs: null,
    contextData: undefined,
    baseUrl: base,
    info,
    state: { started: false },
  };
}

test("an item whose signal aborts while it waits leaves its group with the reason", async () => {
  const runs: Run[] = [];
  const collector = collectorOf(3, runs);
  const a = new AbortController();
  const b = new AbortController();
  const c = new AbortController();
  const first = collector.add(entryOf("a", a.signal));
  const second = collector.add(entryOf("b", b.signal));
  assertEquals(collector.pending, 2);
  b.abort(new Error("cancelled b"));
  await assertRejects(() => second, Error, "cancelled b");
  assertEquals(collector.pending, 1);
  // Aborting it again, or after it left, changes nothing.
  b.abort(new Error("again"));
  const third = collector.add(entryOf("c", c.signal));
  const fourth = collector.add(entryOf("d", new AbortController().signal));
  assertEquals(runs.map((run) => run.ids), [["a", "c", "d"]]);
  assertEquals(runs[0].items.map((item) => item.data), [{ id: "a" }, { id: "c" }, { id: "d" }]);
  runs[0].done.resolve();
  await Promise.all([first, third, fourth]);
});

test("once its run started, an item's abort no longer takes it out of the run", async () => {
  const runs: Run[] = [];
  const collector = collectorOf(2, runs);
  const a = new AbortController();
  const entry = entryOf("a", a.signal);
  const first = collector.add(entry);
  const second = collector.add(entryOf("b", new AbortController().signal));
  assertEquals(entry.state.started, true);
  assertEquals(runs.length, 1);
  // The handler sees the abort through the item's signal; the collector
  // leaves the item's outcome to the run.
  a.abort(new Error("too late"));
  assertEquals(runs[0].items[0].signal.aborted, true);
  assertEquals(collector.pending, 0);
  runs[0].done.resolve();
  await Promise.all([first, second]);
});

test("an item added with its signal aborted already is rejected at once", async () => {
  const runs: Run[] = [];
  const collector = collectorOf(2, runs);
  const a = new AbortController();
  a.abort(new Error("gone"));
  await assertRejects(() => collector.add(entryOf("a", a.signal)), Error, "gone");
  assertEquals(collector.pending, 0);
  assertEquals(runs.length, 0);
});

/** A signal that counts the listeners added to it. */
function countedSignal(): { controller: AbortController; listeners: () => number } {
  const controller = new AbortController();
  let added = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  controller.signal.addEventListener = (...args: Parameters<typeof add>) => {
    added++;
    add(...args);
  };
  return { controller, listeners: () => added };
}

test("items watch their signals only once they have waited a turn", async () => {
  const runs: Run[] = [];
  const collector = collectorOf(2, runs);
  const [a, b] = [countedSignal(), countedSignal()];
  // A run that fills in the turn its items came in: no listener at all.
  const filled = [
    collector.add(entryOf("a", a.controller.signal)),
    collector.add(entryOf("b", b.controller.signal)),
  ];
  assertEquals(runs.map((run) => run.ids), [["a", "b"]]);
  await new Promise((resolve) => setTimeout(resolve, 5));
  assertEquals([a.listeners(), b.listeners()], [0, 0]);
  runs[0].done.resolve();
  await Promise.all(filled);
  // An item still waiting a turn later listens, and leaves when aborted.
  const c = countedSignal();
  const waiting = collector.add(entryOf("c", c.controller.signal));
  assertEquals(c.listeners(), 0);
  await new Promise((resolve) => setTimeout(resolve, 5));
  assertEquals(c.listeners(), 1);
  c.controller.abort(new Error("cancelled c"));
  await assertRejects(() => waiting, Error, "cancelled c");
  assertEquals(collector.pending, 0);
});

test("an item aborted in the turn it came in leaves before its group runs, which waits to be full", async () => {
  const runs: Run[] = [];
  const collector = collectorOf(2, runs);
  const a = new AbortController();
  const first = collector.add(entryOf("a", a.signal));
  a.abort(new Error("cancelled a"));
  const second = collector.add(entryOf("b", new AbortController().signal));
  await assertRejects(() => first, Error, "cancelled a");
  assertEquals(runs.length, 0);
  assertEquals(collector.pending, 1);
  const third = collector.add(entryOf("c", new AbortController().signal));
  assertEquals(runs.map((run) => run.ids), [["b", "c"]]);
  runs[0].done.resolve();
  await Promise.all([second, third]);
});
