// A durable task on Fedwork follows an account on a real Fedify 2.3.6
// server and waits, with ctx.step.waitForActivity(), for the Accept that
// Fedify signs and delivers: the wait resumes with no listener of its own.
import { assert, assertEquals, test, waitUntil } from "@fedify/fixture";
import { Accept, Follow } from "@fedify/vocab";
import type { Federation, TaskDefinition, TaskStatus } from "@fedwork/core";
import { z } from "zod";
import { startFedifyApp, startFedworkApp } from "./apps.ts";
import { within } from "./support.ts";

const followSchema = z.object({ followee: z.string(), inbox: z.string() });

function defineFollowTask(federation: Federation<void>) {
  return federation.defineTask("follow-and-wait", {
    schema: followSchema,
    handler: async (ctx, data) => {
      const followee = new URL(data.followee);
      const follow = await ctx.step.run("follow", async () => {
        const id = new URL(`/follows/${crypto.randomUUID()}`, ctx.origin);
        await ctx.sendActivity(
          { identifier: "alice" },
          { id: followee, inboxId: new URL(data.inbox) },
          new Follow({ id, actor: ctx.getActorUri("alice"), object: followee }),
        );
        return id.href;
      });
      const accept = await ctx.step.waitForActivity("accepted", {
        type: Accept,
        object: follow,
        actor: followee,
        timeout: { minutes: 5 },
      });
      return accept == null ? null : { follow, accept: accept.id?.href, by: accept.actorId?.href };
    },
  });
}

test("waitForActivity resumes a task when a real Fedify server's Accept arrives", async () => {
  let task: TaskDefinition<void, unknown, z.input<typeof followSchema>, unknown> | undefined;
  await using fedwork = await startFedworkApp({
    // Declared: an Accept that comes before the wait starts is kept too.
    waitedActivities: [Accept],
    setup: (federation) => task = defineFollowTask(federation),
  });
  await using fedify = await startFedifyApp();
  const ctx = fedwork.federation.createContext(fedwork.server.url, undefined);
  const enqueued = await ctx.enqueueTask(task!, {
    followee: fedify.url("/users/bob").href,
    inbox: fedify.url("/users/bob/inbox").href,
  });
  assert(enqueued.status === "enqueued");
  // The app's own Accept listener sees it too; the task needs none.
  await within(fedwork.accepted, "Fedwork to receive Fedify's Accept");
  let result: TaskStatus | undefined;
  await waitUntil(async () => {
    result = await fedwork.federation.getTaskStatus(enqueued.messageId);
    return result?.state === "completed" || result?.state === "failed";
  }, { what: () => `the waiting task to end; last ${result?.state}` });
  assert(result != null);
  assertEquals(result.state, "completed");
  const value = result.result as { follow: string; accept: string; by: string };
  assertEquals(value.by, fedify.url("/users/bob").href);
  assert(value.accept.startsWith(fedify.url("/users/bob#accepts/").href), value.accept);
  assert(value.follow.startsWith(fedwork.url("/follows/").href), value.follow);
});
