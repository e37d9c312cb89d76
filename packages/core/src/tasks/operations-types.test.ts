// Type-level tests of the operations API: enqueue results, deduplication
// keys and scheduleTask().  The `@ts-expect-error` lines fail `deno check`
// and `tsc` if they ever stop being errors; the runtime test only keeps
// the file in the suite.
import { assertEquals, test } from "@fedify/fixture";
import { z } from "zod";
import type { Context } from "../federation/context-api.ts";
import type { Federation } from "../federation/federation.ts";
import type { TaskEnqueueResult } from "./definition.ts";

async function typeChecks(federation: Federation<void>, ctx: Context<void>): Promise<void> {
  const digest = federation.defineTask("digest", {
    schema: z.object({ userId: z.string(), count: z.number() }),
    handler() {},
  });
  const result: TaskEnqueueResult = await ctx.enqueueTask(digest, { userId: "a", count: 1 }, {
    deduplicationKey: "a",
  });
  if (result.status === "enqueued") {
    const id: string = result.messageId;
    // @ts-expect-error: an enqueued result has no deduplicationKey.
    void result.deduplicationKey;
    void id;
  } else if (result.status === "deduplicated") {
    const key: string = result.deduplicationKey;
    void key;
  }
  // @ts-expect-error: a single enqueue takes one key, not a function.
  await ctx.enqueueTask(digest, { userId: "a", count: 1 }, { deduplicationKey: () => "a" });
  const results: TaskEnqueueResult[] = await ctx.enqueueTaskMany(digest, [], {
    // The key function gets the payload's input type.
    deduplicationKey: (payload, index) => `${payload.userId}:${index}`,
  });
  await ctx.enqueueTaskMany(digest, [], {
    // @ts-expect-error: the payload has no "user" property.
    deduplicationKey: (payload) => payload.user,
  });
  void results;

  await federation.scheduleTask(digest, { userId: "a", count: 1 }, { every: { minutes: 5 } });
  await federation.scheduleTask(digest, { userId: "a", count: 1 }, {
    cron: "0 3 * * *",
    timezone: "Europe/Paris",
    id: "nightly",
  });
  // @ts-expect-error: count must be a number.
  await federation.scheduleTask(digest, { userId: "a", count: "1" }, { every: { minutes: 5 } });
  // @ts-expect-error: every and cron exclude each other.
  await federation.scheduleTask(digest, { userId: "a", count: 1 }, {
    every: {},
    cron: "* * * * *",
  });
  // @ts-expect-error: a time zone goes with cron only.
  await federation.scheduleTask(digest, { userId: "a", count: 1 }, { every: {}, timezone: "UTC" });

  const page = await federation.listFailedTasks({ taskName: "digest", limit: 10 });
  const attempts: number = page.records[0].attempts;
  const counts: Map<string, number> = await federation.countFailedTasks();
  void [attempts, counts];
}

test("the operations API has the types the manual promises", () => {
  assertEquals(typeof typeChecks, "function");
});
