// Type-level tests of task results: the `@ts-expect-error` lines fail
// `deno check` and `tsc` if they ever stop being errors.  The runtime test
// only keeps the file in the suite.
import { assertEquals, test } from "@fedify/fixture";
import { z } from "zod";
import type { Federation } from "../federation/federation.ts";
import type { TaskDefinition } from "./definition.ts";

interface AppData {
  readonly tenant: string;
}

async function typeChecks(federation: Federation<AppData>): Promise<void> {
  const resize = federation.defineTask("resize", {
    schema: z.object({ album: z.string() }),
    handler: (_ctx, data) => ({ album: data.album, sizes: [64, 128] }),
  });
  const typed: TaskDefinition<AppData, { album: string }, { album: string }, {
    album: string;
    sizes: number[];
  }> = resize;
  const status = await federation.getTaskStatus(resize, "id");
  const sizes: number[] | undefined = status?.result?.sizes;
  // @ts-expect-error: the result's album is a string.
  const wrong: number | undefined = status?.result?.album;
  // @ts-expect-error: the handler's result has no such field.
  void status?.result?.width;
  for await (const update of federation.watchTask(resize, "id")) {
    const album: string | undefined = update.status.result?.album;
    void album;
  }
  // Without the handle the result is unknown and must be narrowed.
  const untyped = await federation.getTaskStatus("id");
  // @ts-expect-error: an untyped result is unknown.
  void untyped?.result?.sizes;

  // An async handler's result is what its promise resolves to.
  const count = federation.defineTask("count", {
    schema: z.object({}),
    handler: async () => await Promise.resolve(42),
  });
  const counted: number | undefined = (await federation.getTaskStatus(count, "id"))?.result;
  // A handler returning nothing has no result.
  const quiet = federation.defineTask("quiet", { schema: z.object({}), handler() {} });
  const nothing: void | undefined = (await federation.getTaskStatus(quiet, "id"))?.result;

  federation.defineTask("map", {
    schema: z.object({}),
    // @ts-expect-error: a Map is not JSON-compatible, so it cannot be a result.
    handler: () => new Map<string, number>(),
  });
  // @ts-expect-error: a function cannot be a result (reported on the call:
  // neither overload of defineTask() takes it).
  federation.defineTask("function", {
    schema: z.object({}),
    handler: () => () => 1,
  });
  federation.defineTask("date", {
    schema: z.object({}),
    // @ts-expect-error: a Date is not JSON-compatible; return its ISO string.
    handler: async () => await Promise.resolve(new Date()),
  });
  void [typed, sizes, wrong, counted, nothing];
}

test("task results are typed through defineTask()", () => {
  void typeChecks;
  assertEquals(typeof typeChecks, "function");
});
