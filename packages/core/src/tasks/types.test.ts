// Type-level tests: the `@ts-expect-error` lines fail `deno check` and `tsc`
// if they ever stop being errors.  The runtime test only keeps the file in
// the suite.
import { assertEquals, test } from "@fedify/fixture";
import { Create } from "@fedify/vocab";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";
import type { TaskDefinition, TaskEnqueueOptions } from "./definition.ts";
import { TaskStore } from "./registry.ts";
import type { TaskContext, TaskRegistry } from "../federation/context-api.ts";

interface AppData {
  readonly tenant: string;
}

/** The signature `Context.enqueueTask()` has. */
declare function enqueueTask<TData, TInput>(
  task: TaskDefinition<AppData, TData, TInput>,
  data: NoInfer<TInput>,
  options?: TaskEnqueueOptions,
): Promise<void>;

/** The signature `Context.enqueueTaskMany()` has. */
declare function enqueueTaskMany<TData, TInput>(
  task: TaskDefinition<AppData, TData, TInput>,
  payloads: readonly NoInfer<TInput>[],
  options?: TaskEnqueueOptions,
): Promise<void>;

function typeChecks(registry: TaskRegistry<AppData>): void {
  const digest = registry.defineTask("digest", {
    schema: z.object({ userId: z.string(), count: z.number() }),
    handler(ctx, data) {
      const tenant: string = ctx.data.tenant;
      const userId: string = data.userId;
      const count: number = data.count;
      // @ts-expect-error: count is a number.
      const wrong: string = data.count;
      void [tenant, userId, count, wrong];
    },
    onError(_ctx, error, data) {
      const e: unknown = error;
      const userId: string = data.userId;
      void [e, userId];
    },
  });
  enqueueTask(digest, { userId: "alice", count: 1 });
  enqueueTask(digest, { userId: "alice", count: 1 }, { delay: { seconds: 5 }, orderingKey: "a" });
  // An ISO 8601 duration, as the manual shows.
  enqueueTask(digest, { userId: "alice", count: 1 }, { delay: "PT5M" });
  // @ts-expect-error: a delay is not a number of milliseconds.
  enqueueTask(digest, { userId: "alice", count: 1 }, { delay: 300_000 });
  // @ts-expect-error: count must be a number.
  enqueueTask(digest, { userId: "alice", count: "1" });
  // @ts-expect-error: userId is missing.
  enqueueTask(digest, { count: 1 });
  enqueueTaskMany(digest, [{ userId: "a", count: 1 }, { userId: "b", count: 2 }]);
  // @ts-expect-error: the second payload has the wrong shape.
  enqueueTaskMany(digest, [{ userId: "a", count: 1 }, { user: "b" }]);

  // A transforming schema: enqueue takes the input, the handler the output.
  const measure = registry.defineTask("measure", {
    schema: z.object({ text: z.string().transform((s) => s.length) }),
    handler(_ctx, data) {
      const length: number = data.text;
      // @ts-expect-error: the handler sees the output, a number.
      const text: string = data.text;
      void [length, text];
    },
  });
  enqueueTask(measure, { text: "hello" });
  // @ts-expect-error: the caller passes the input, a string.
  enqueueTask(measure, { text: 5 });

  const shout = registry.defineTask("shout", {
    schema: v.pipe(v.string(), v.transform((s) => s.length)),
    handler(_ctx, data: number) {
      void data;
    },
  });
  enqueueTask(shout, "hi");
  // @ts-expect-error: valibot's input is a string.
  enqueueTask(shout, 2);

  const ark = registry.defineTask("ark", {
    schema: type({ id: "string" }),
    handler(_ctx, data) {
      const id: string = data.id;
      void id;
    },
  });
  enqueueTask(ark, { id: "x" });
  // @ts-expect-error: id must be a string.
  enqueueTask(ark, { id: 1 });

  // A vocabulary object is an instanceof leaf.
  const relay = registry.defineTask("relay", {
    schema: z.object({ activity: z.instanceof(Create) }),
    handler(_ctx, data) {
      const activity: Create = data.activity;
      void activity;
    },
  });
  enqueueTask(relay, { activity: new Create({}) });
  // @ts-expect-error: a plain object is not a Create.
  enqueueTask(relay, { activity: { type: "Create" } });

  // A handle is tied to its context data type.
  const other = {} as TaskRegistry<{ readonly other: number }>;
  const foreign = other.defineTask("foreign", { schema: z.number(), handler() {} });
  // @ts-expect-error: the handle belongs to a federation with other context data.
  enqueueTask(foreign, 1);

  registry.defineTask("needs-schema", {
    // @ts-expect-error: schema must be a Standard Schema.
    schema: { parse: (x: unknown) => x },
    handler() {},
  });
  // @ts-expect-error: handler is required.
  registry.defineTask("needs-handler", { schema: z.number() });
}

test("TaskStore implements TaskRegistry", () => {
  const store: TaskRegistry<AppData> = new TaskStore<AppData, TaskContext<AppData>>();
  void typeChecks;
  const task = store.defineTask("noop", { schema: z.null(), handler() {} });
  assertEquals(task.name, "noop");
});
