import { assertEquals, test } from "@fedify/fixture";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { RecordingKvStore } from "../../kv/testdata/recording-kv-store.ts";
import { InProcessPubSub } from "../../pubsub/in-process-pubsub.ts";
import { CANCELLATION_FLAG_MAX_AGE_MS, type CancellationFlagOptions } from "./flag.ts";
import { cancellationMarkerTtl, TaskCancellations } from "./markers.ts";

/** A clock the test moves, and a sleep that moves it. */
function manualClock(): CancellationFlagOptions & { advance(ms: number): void; slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    now: () => now,
    sleep: (ms) => {
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
    advance: (ms) => void (now += ms),
    slept,
  };
}

test("with no cancellation ever requested, runs read no marker, only the flag once per its age", async () => {
  const kv = new RecordingKvStore();
  const clock = manualClock();
  const cancellations = new TaskCancellations(kv, new InProcessPubSub(), true, clock);
  const worker = new AbortController().signal;
  for (let round = 0; round < 3; round++) {
    const watches = ["a", "b", "c"].map((id) => cancellations.begin(`${id}${round}`, worker)!);
    await Promise.all(watches.map((watch) => watch.checked));
    assertEquals(watches.map((watch) => watch.cancelled), [false, false, false]);
    for (const watch of watches) watch.end();
    clock.advance(CANCELLATION_FLAG_MAX_AGE_MS / 2);
  }
  // Rounds at 0, 500 and 1000 ms: the flag read at 0 serves the first two.
  assertEquals(kv.reads, ["fedwork/task-cancel-requested", "fedwork/task-cancel-requested"]);
});

test("a cancellation requested by another process reaches a worker whose flag read is cached", async () => {
  const kv = new RecordingKvStore();
  const clock = manualClock();
  const worker = new TaskCancellations(kv, new InProcessPubSub(), true, clock);
  const caller = new TaskCancellations(kv, new InProcessPubSub(), true, clock);
  const signal = new AbortController().signal;
  const before = worker.begin("before", signal)!;
  await before.checked;
  before.end();
  // The worker trusts "no cancellation" until its read ages; the caller's
  // first request waits for that before it writes the marker.
  await caller.request("queued", "stop", cancellationMarkerTtl(0));
  assertEquals(clock.slept, [CANCELLATION_FLAG_MAX_AGE_MS]);
  const run = worker.begin("queued", signal)!;
  await run.checked;
  assertEquals([run.cancelled, run.reason, run.signal.aborted], [true, "stop", true]);
  run.end();
  // The caller's next request does not wait again.
  await caller.request("other", undefined, cancellationMarkerTtl(0));
  assertEquals(clock.slept, [CANCELLATION_FLAG_MAX_AGE_MS]);
});

test("a cancellation heard over the pub/sub makes the worker read markers at once", async () => {
  const kv = new RecordingKvStore();
  const pubsub = new InProcessPubSub();
  const clock = manualClock();
  const worker = new TaskCancellations(kv, pubsub, true, clock);
  const caller = new TaskCancellations(kv, pubsub, true, {
    ...clock,
    sleep: () => Promise.resolve(),
  });
  const stop = new AbortController();
  await worker.listen(stop.signal);
  const signal = new AbortController().signal;
  const before = worker.begin("before", signal)!;
  await before.checked;
  before.end();
  await caller.request("queued", undefined, cancellationMarkerTtl(0));
  const run = worker.begin("queued", signal)!;
  await run.checked;
  assertEquals(run.cancelled, true);
  run.end();
  stop.abort();
});

test("on a MemoryKvStore the flag is read at every run and the first request does not wait", async () => {
  const kv = new MemoryKvStore();
  const clock = manualClock();
  const worker = new TaskCancellations(kv, new InProcessPubSub(), true, clock);
  const caller = new TaskCancellations(kv, new InProcessPubSub(), true, clock);
  const signal = new AbortController().signal;
  const before = worker.begin("before", signal)!;
  assertEquals([before.checked, before.cancelled], [undefined, false]);
  before.end();
  await caller.request("queued", undefined, cancellationMarkerTtl(0));
  assertEquals(clock.slept, []);
  const run = worker.begin("queued", signal)!;
  assertEquals([run.checked, run.cancelled], [undefined, true]);
  run.end();
});
