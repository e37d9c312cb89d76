// The kit's clock drives what core stores as "now": a debounce burst's
// maximum wait, a throttled result's `until`, a task's enqueue time.
import { assertEquals, test } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "./mod.ts";

const origin = new URL("https://example.com/");
const START = Date.UTC(2020, 0, 1);

test("a debounce's maxWait is measured on the kit's clock", async () => {
  const federation = createFederation<void>({ now: START });
  const ran: string[] = [];
  const save = federation.defineTask("save-draft", {
    schema: z.object({ text: z.string() }),
    handler: (_ctx, { text }) => void ran.push(text),
  });
  const ctx = federation.createContext(origin, undefined);
  const debounce = { key: "draft:1", delay: { seconds: 10 }, maxWait: { seconds: 30 } };
  // An enqueue every 8 s keeps the burst open; maxWait ends it at 30 s.
  const first = await ctx.enqueueTask(save, { text: "0" }, { debounce });
  assertEquals(first.status === "debounced" && first.dueAt.getTime(), START + 10_000);
  // Each enqueue is due 10 s later, but never past its burst's first + 30 s;
  // the one at 32 s opens a new burst.
  const dueSeconds = [18, 26, 30, 42, 50];
  for (let i = 1; i <= 5; i++) {
    await federation.clock.advance({ seconds: 8 });
    const result = await ctx.enqueueTask(save, { text: `${i}` }, { debounce });
    const dueAt = result.status === "debounced" ? result.dueAt.getTime() : NaN;
    assertEquals(dueAt, START + dueSeconds[i - 1] * 1000, `enqueue ${i}`);
    // The first burst ran at 30 s with enqueue 3, its latest then.
    assertEquals(ran, i <= 3 ? [] : ["3"], `after enqueue ${i}`);
  }
  await federation.clock.advance({ seconds: 10 });
  assertEquals(ran, ["3", "5"]);
});

test("a throttled result's until is the end of the period on the kit's clock", async () => {
  const federation = createFederation<void>({ now: START });
  const ping = federation.defineTask("ping", {
    schema: z.object({ n: z.number() }),
    handler: () => {},
  });
  const ctx = federation.createContext(origin, undefined);
  const throttle = { key: "ping", period: { hours: 1 } };
  assertEquals((await ctx.enqueueTask(ping, { n: 1 }, { throttle })).status, "enqueued");
  await federation.clock.advance({ minutes: 20 });
  const throttled = await ctx.enqueueTask(ping, { n: 2 }, { throttle });
  assertEquals(throttled.status, "throttled");
  assertEquals(throttled.status === "throttled" && throttled.until.getTime(), START + 3_600_000);
});

test("a task's enqueue time is the kit's clock's", async () => {
  const federation = createFederation<void>({ now: START });
  const seen: number[] = [];
  const job = federation.defineTask("job", {
    schema: z.object({}),
    handler: (ctx) => void seen.push(ctx.task.enqueuedAt.getTime()),
  });
  const ctx = federation.createContext(origin, undefined);
  await federation.clock.advance({ minutes: 3 });
  await ctx.enqueueTask(job, {}, { delay: { minutes: 1 } });
  const [pending] = federation.pendingMessages;
  assertEquals(pending.message.started, new Date(START + 180_000).toISOString());
  await federation.clock.advance({ minutes: 1 });
  assertEquals(seen, [START + 180_000]);
});

test("a recurring schedule's ticks run as the clock passes them, each at its tick", async () => {
  const federation = createFederation<void>({ now: START });
  const ticks: string[] = [];
  const digest = federation.defineTask("digest", {
    schema: z.object({ list: z.string() }),
    handler: (_ctx, { list }) =>
      void ticks.push(`${list} ${new Date(federation.clock.now() - START).toISOString()}`),
  });
  const schedule = await federation.scheduleTask(digest, { list: "daily" }, {
    id: "digest",
    every: { hours: 1 },
    baseUrl: origin.href,
  });
  assertEquals(schedule.createdAt.getTime(), START);
  assertEquals(await federation.clock.advance({ minutes: 59 }), []);
  const runs = await federation.clock.advance({ hours: 2 });
  assertEquals(runs.map((run) => [run.taskName, run.outcome]), [
    ["digest", "completed"],
    ["digest", "completed"],
  ]);
  assertEquals(ticks, ["daily 1970-01-01T01:00:00.000Z", "daily 1970-01-01T02:00:00.000Z"]);
  assertEquals(await federation.unscheduleTask("digest"), true);
  assertEquals(await federation.clock.advance({ hours: 3 }), []);
  assertEquals(ticks.length, 2);
});
