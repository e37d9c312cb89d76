// The shared deadline list behind handler time limits: each deadline fires
// once, on time, and never after it was cancelled, whatever the others do.
import { assert, assertEquals, deferred, test, within } from "@fedify/fixture";
import { DeadlineList } from "./deadlines.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("deadlines of one delay fire once each, in order, and not before their delay", async () => {
  const list = new DeadlineList();
  const fired: [number, number][] = [];
  const all = deferred<void>();
  const started: number[] = [];
  for (let i = 0; i < 3; i++) {
    started.push(performance.now());
    list.after(40, () => {
      fired.push([i, performance.now() - started[i]]);
      if (fired.length === 3) all.resolve();
    });
    await sleep(15);
  }
  await within(all.promise, "the three deadlines");
  await sleep(60);
  assertEquals(fired.map(([i]) => i), [0, 1, 2]);
  // Timers may fire up to a millisecond ahead of performance.now().
  for (const [i, elapsed] of fired) {
    assert(elapsed >= 38, `deadline ${i} fired after ${elapsed} ms`);
  }
});

test("a cancelled deadline never fires, and the ones around it still do", async () => {
  const list = new DeadlineList();
  const fired: string[] = [];
  const last = deferred<void>();
  const first = list.after(20, () => fired.push("first"));
  list.after(20, () => fired.push("second"));
  const third = list.after(20, () => fired.push("third"));
  list.after(20, () => {
    fired.push("fourth");
    last.resolve();
  });
  first.cancel();
  third.cancel();
  third.cancel();
  await within(last.promise, "the fourth deadline");
  await sleep(40);
  assertEquals(fired, ["second", "fourth"]);
});

test("a deadline set after all others were cancelled waits its own delay", async () => {
  const list = new DeadlineList();
  let early = false;
  list.after(30, () => early = true).cancel();
  await sleep(20);
  const setAt = performance.now();
  const fired = deferred<number>();
  list.after(30, () => fired.resolve(performance.now() - setAt));
  const elapsed = await within(fired.promise, "the second deadline");
  assert(elapsed >= 28, `fired after ${elapsed} ms`);
  assertEquals(early, false);
});

test("deadlines of different delays fire by their own delays, not in the order they were set", async () => {
  const list = new DeadlineList();
  const fired: string[] = [];
  const done = deferred<void>();
  list.after(80, () => {
    fired.push("long");
    done.resolve();
  });
  list.after(10, () => fired.push("short"));
  await within(done.promise, "the long deadline");
  assertEquals(fired, ["short", "long"]);
});

test("thousands of cancelled deadlines behind a live one leave it and the next ones firing", async () => {
  const list = new DeadlineList();
  const fired: string[] = [];
  const done = deferred<void>();
  list.after(50, () => fired.push("head"));
  for (let i = 0; i < 5_000; i++) list.after(50, () => fired.push(`run ${i}`)).cancel();
  list.after(50, () => {
    fired.push("tail");
    done.resolve();
  });
  await within(done.promise, "the last deadline");
  assertEquals(fired, ["head", "tail"]);
});

test("a deadline set from inside a firing one waits its whole delay", async () => {
  const list = new DeadlineList();
  const second = deferred<number>();
  let firstAt = 0;
  list.after(20, () => {
    firstAt = performance.now();
    list.after(20, () => second.resolve(performance.now() - firstAt));
  });
  const elapsed = await within(second.promise, "the nested deadline");
  assert(elapsed >= 18, `fired after ${elapsed} ms`);
});
