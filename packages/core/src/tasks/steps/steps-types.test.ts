// Type-level tests of durable steps: the `@ts-expect-error` lines fail
// `deno check` and `tsc` if they ever stop being errors.  The runtime test
// only keeps the file in the suite.
import { assertEquals, test } from "@fedify/fixture";
import { z } from "zod";
import type { Federation } from "../../federation/federation.ts";

function typeChecks(federation: Federation<void>): void {
  const child = federation.defineTask("child", {
    schema: z.object({ n: z.number() }),
    handler: (_ctx, data) => ({ doubled: data.n * 2 }),
  });
  federation.defineTask("parent", {
    schema: z.object({}),
    handler: async (ctx) => {
      // run() resolves to the function's awaited result.
      const when: Date = await ctx.step.run("when", () => new Date());
      const count: number = await ctx.step.run("count", async () => await Promise.resolve(1));
      const map: Map<string, number> = await ctx.step.run("map", () => new Map([["a", 1]]));
      // @ts-expect-error: the step returns a number, not a string.
      const wrong: string = await ctx.step.run("wrong", () => 1);
      // invoke() resolves to the child's result type.
      const invoked: { doubled: number } = await ctx.step.invoke("double", child, { n: 2 });
      // @ts-expect-error: the child's payload needs a number n.
      await ctx.step.invoke("bad-payload", child, { n: "2" });
      // @ts-expect-error: the child's result has no such field.
      void (await ctx.step.invoke("bad-result", child, { n: 1 })).tripled;
      // waitForEvent() resolves to the data type asked for, or null.
      const event: { by: string } | null = await ctx.step.waitForEvent<{ by: string }>("e", {
        event: "approved",
        key: "k",
        timeout: { days: 1 },
      });
      // @ts-expect-error: a wait may time out, so the data may be null.
      const never: { by: string } = await ctx.step.waitForEvent<{ by: string }>("e2", {
        event: "approved",
        key: "k",
        timeout: { days: 1 },
      });
      // @ts-expect-error: a wait needs its timeout.
      await ctx.step.waitForEvent("e3", { event: "approved", key: "k" });
      await ctx.step.sleep("nap", "PT1H");
      await ctx.sendEvent("approved", { key: "k", data: { by: "me" } });
      void [when, count, map, wrong, invoked, event, never];
    },
  });
}

test("the durable step types hold (checked by deno check and tsc)", () => {
  assertEquals(typeof typeChecks, "function");
});
