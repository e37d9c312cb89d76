// The kit's clock, store and queue on their own.
import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { Follow, Person } from "@fedify/vocab";
import {
  createContext,
  createFederation,
  type TaskRun,
  TestClock,
  TestKvStore,
  TestMessageQueue,
} from "./mod.ts";

test("TestClock stands still until advance(), then stops at each timeline entry on the way", async () => {
  const clock = new TestClock(new Date("2026-01-01T00:00:00Z"));
  const start = clock.now();
  const due = [start + 1000, start + 3000, start + 9000];
  const seen: number[] = [];
  clock.addTimeline({
    nextDueAt: () => due[0],
    runDue() {
      const runs: TaskRun[] = [];
      while (due.length > 0 && due[0] <= clock.now()) {
        due.shift();
        seen.push(clock.now() - start);
      }
      return Promise.resolve(runs);
    },
  });
  assertEquals(clock.now(), start);
  await clock.advance({ seconds: 5 });
  assertEquals(seen, [1000, 3000]);
  assertEquals(clock.now() - start, 5000);
  await clock.advance("PT10S");
  assertEquals(seen, [1000, 3000, 9000]);
  assertEquals(clock.now() - start, 15_000);
});

test("TestClock refuses a negative duration and a start that is not a time", async () => {
  assertThrows(() => new TestClock(Number.NaN), RangeError, "finite");
  await assertRejects(() => new TestClock().advance({ seconds: -1 }), RangeError);
});

test("TestKvStore expires entries when the clock passes their time to live", async () => {
  const clock = new TestClock(0);
  const kv = new TestKvStore(clock);
  await kv.set(["a", "1"], { n: 1 }, { ttl: { minutes: 1 } });
  await kv.set(["a", "2"], { n: 2 });
  await kv.set(["b"], "other");
  assertEquals(await kv.cas(["a", "2"], { n: 1 }, { n: 3 }), false);
  assertEquals(await kv.cas(["a", "2"], { n: 2 }, { n: 3 }), true);
  await clock.advance({ seconds: 59 });
  assertEquals(await kv.get(["a", "1"]), { n: 1 });
  await clock.advance({ seconds: 1 });
  assertEquals(await kv.get(["a", "1"]), undefined);
  const listed = [];
  for await (const entry of kv.list(["a"])) listed.push([entry.key, entry.value]);
  assertEquals(listed, [[["a", "2"], { n: 3 }]]);
});

test("TestMessageQueue keeps messages as JSON and refuses what JSON cannot hold", async () => {
  const clock = new TestClock(0);
  const queue = new TestMessageQueue(clock);
  await queue.enqueue({ at: new Date(0), n: 1 }, { delay: { seconds: 1 } });
  assertEquals(queue.takeDue(), undefined);
  assertEquals(await queue.getDepth(), { queued: 1, ready: 0, delayed: 1 });
  await clock.advance({ seconds: 1 });
  assertEquals(queue.takeDue(), { at: "1970-01-01T00:00:00.000Z", n: 1 });
  await assertRejects(() => queue.enqueue(undefined), TypeError, "JSON");
  await assertRejects(() => queue.enqueueMany([1, 2n]), TypeError);
  assertEquals(queue.pending(), []);
});

test("receiveActivity delivers to the personal inbox the recipient option names", async () => {
  const federation = createFederation<void>();
  const recipients: (string | null)[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (ctx) => void recipients.push(ctx.recipient));
  const bob = new Person({ id: new URL("https://remote.example/users/bob") });
  await federation.receiveActivity(
    new Follow({ id: new URL("https://remote.example/f/1"), actor: bob.id }),
    { recipient: "alice" },
  );
  await federation.receiveActivity(
    new Follow({ id: new URL("https://remote.example/f/2"), actor: bob.id }),
  );
  assertEquals(recipients, ["alice", null]);
});

test("createContext refuses a federation that is not a test federation", () => {
  assertThrows(
    () => createContext({ data: undefined, federation: {} as never }),
    TypeError,
    "createFederation()",
  );
});
