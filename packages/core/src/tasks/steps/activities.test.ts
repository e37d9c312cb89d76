// waitForActivity end to end: two federations on loopback, signed Accepts
// posted to the waiting one's inbox over HTTP, its worker on a real
// in-process queue.
import { assert, assertEquals, test, waitUntil } from "@fedify/fixture";
import { Accept, Note } from "@fedify/vocab";
import { z } from "zod";
import {
  type InboxServer,
  post,
  type SigningKey,
  startServer,
} from "../../federation/testdata/inbox-test-support.ts";
import { testKeyPair, withWorkers } from "../../federation/testdata/test-support.ts";
import type { Federation } from "../../federation/api.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import type { TaskStatus } from "../../operator/status/store.ts";

const { privateKey } = await testKeyPair();

function keyOf(remote: InboxServer, identifier: string): SigningKey {
  return { keyId: remote.url(`/users/${identifier}#main-key`), privateKey };
}

function accept(remote: InboxServer, actor: string, object: string, id: string): string {
  return JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: remote.url(`/accepts/${id}`).href,
    type: "Accept",
    actor: remote.url(`/users/${actor}`).href,
    object,
  });
}

async function statusOf(federation: Federation<void>, id: string, states: string[]) {
  let status: TaskStatus | undefined;
  await waitUntil(async () => {
    status = await federation.getTaskStatus(id);
    return status != null && states.includes(status.state);
  }, { what: () => `task ${id} to be ${states.join(" or ")}; last ${status?.state}` });
  return status!;
}

/** The waiting side, its remote peer, and a task that waits for an Accept. */
async function withWaitingServer(
  fn: (
    local: InboxServer,
    remote: InboxServer,
    enqueue: (data: WaitData) => Promise<string>,
    unhandled: () => number,
  ) => Promise<void>,
  options: { readonly declare?: boolean } = {},
): Promise<void> {
  await using queue = new InProcessMessageQueue();
  const local = await startServer({
    queue,
    ...(options.declare ? { waitedActivities: [Accept] } : {}),
  });
  const remote = await startServer();
  let unhandled = 0;
  local.federation.on("unhandled", (event) => {
    if (event.kind === "inbox") unhandled++;
  });
  const task = local.federation.defineTask("wait-for-accept", {
    schema: z.object({
      object: z.string().optional(),
      actor: z.string().optional(),
      timeoutMs: z.number(),
    }),
    handler: async (ctx, data) => {
      const got = await ctx.step.waitForActivity("accepted", {
        type: Accept,
        ...(data.object == null ? {} : { object: data.object }),
        ...(data.actor == null ? {} : { actor: new URL(data.actor) }),
        timeout: { milliseconds: data.timeoutMs },
      });
      if (got == null) return "timeout";
      assert(got instanceof Accept, "the activity is rebuilt as an Accept");
      return got.id?.href ?? "no id";
    },
  });
  const ctx = local.federation.createContext(local.server.url, undefined);
  try {
    await withWorkers(local.federation, () =>
      fn(local, remote, async (data) => {
        const enqueued = await ctx.enqueueTask(task, data);
        assert(enqueued.status === "enqueued");
        return enqueued.messageId;
      }, () => unhandled));
  } finally {
    await remote.server.close();
    await local.server.close();
  }
}

type WaitData = { object?: string; actor?: string; timeoutMs: number };

test("waitForActivity resumes with the verified Accept of its Follow, not a stranger's", () =>
  withWaitingServer(async (local, remote, enqueue, unhandled) => {
    const follow = local.url("/follows/1").href;
    const id = await enqueue({
      object: follow,
      actor: remote.url("/users/alice").href,
      timeoutMs: 60_000,
    });
    await statusOf(local.federation, id, ["retrying"]);
    // getTaskSteps() tells operators which step it waits at, and until when.
    const [waiting, ...more] = await local.federation.getTaskSteps(id);
    assertEquals([waiting.id, waiting.kind, waiting.state, more.length], [
      "accepted",
      "activity",
      "waiting",
      0,
    ]);
    assert(waiting.until!.getTime() - waiting.at.getTime() === 60_000, "the wait's end");
    // Mallory signs for herself, so her Accept of the same Follow is
    // verified, but she is not the actor waited for.
    const inbox = local.url("/users/bob/inbox");
    const forged = await post(
      inbox,
      accept(remote, "mallory", follow, "m"),
      keyOf(remote, "mallory"),
    );
    assertEquals(forged.status, 202);
    await waitUntil(() => unhandled() === 1, { what: "mallory's Accept to be processed" });
    assertEquals((await local.federation.getTaskStatus(id))?.state, "retrying");
    const real = await post(inbox, accept(remote, "alice", follow, "a"), keyOf(remote, "alice"));
    assertEquals(real.status, 202);
    const status = await statusOf(local.federation, id, ["completed", "failed"]);
    assertEquals(status.state, "completed");
    assertEquals(status.result, remote.url("/accepts/a").href);
    await waitUntil(async () => (await local.federation.getTaskSteps(id)).length === 0, {
      what: "the ended task's step records to be deleted",
    });
  }));

test("an Accept that arrived before the wait started resolves it; none times out to null", () =>
  withWaitingServer(async (local, remote, enqueue, unhandled) => {
    const follow = local.url("/follows/early").href;
    const sent = await post(
      local.url("/inbox"),
      accept(remote, "alice", follow, "early"),
      keyOf(remote, "alice"),
    );
    assertEquals(sent.status, 202);
    await waitUntil(() => unhandled() === 1, { what: "the early Accept to be processed" });
    const early = await enqueue({ object: follow, timeoutMs: 60_000 });
    const status = await statusOf(local.federation, early, ["completed", "failed"]);
    assertEquals(status.result, remote.url("/accepts/early").href);
    // Waiting on the actor alone: alice sent no Accept of anything else,
    // but she did send one, which matches.
    const byActor = await enqueue({ actor: remote.url("/users/alice").href, timeoutMs: 60_000 });
    assertEquals(
      (await statusOf(local.federation, byActor, ["completed", "failed"])).result,
      remote.url("/accepts/early").href,
    );
    const none = await enqueue({
      object: local.url("/follows/never").href,
      actor: remote.url("/users/alice").href,
      timeoutMs: 100,
    });
    assertEquals(
      (await statusOf(local.federation, none, ["completed", "failed"])).result,
      "timeout",
    );
  }, { declare: true }));

test("waitForActivity refuses a wait anyone could resolve, a non-activity type and unknown options", async () => {
  await using queue = new InProcessMessageQueue();
  const local = await startServer({ queue });
  const errors: string[] = [];
  const task = local.federation.defineTask("wait-for-nothing", {
    schema: z.object({ which: z.number() }),
    retryPolicy: () => null,
    handler: async (ctx, data) => {
      try {
        if (data.which === 0) {
          await ctx.step.waitForActivity("a", { type: Accept, timeout: { seconds: 1 } });
        } else if (data.which === 1) {
          await ctx.step.waitForActivity("a", {
            // @ts-expect-error: a Note is not an activity.
            type: Note,
            actor: "https://example.com/users/a",
            timeout: { seconds: 1 },
          });
        } else {
          await ctx.step.waitForActivity("a", {
            type: Accept,
            actor: "https://example.com/users/a",
            timeout: { seconds: 1 },
            // @ts-expect-error: no such option.
            objet: "https://example.com/follows/1",
          });
        }
      } catch (error) {
        errors[data.which] = `${(error as Error).name}: ${(error as Error).message}`;
      }
    },
  });
  const ctx = local.federation.createContext(local.server.url, undefined);
  try {
    await withWorkers(local.federation, async () => {
      for (const which of [0, 1, 2]) {
        const enqueued = await ctx.enqueueTask(task, { which });
        assert(enqueued.status === "enqueued");
        await statusOf(local.federation, enqueued.messageId, ["completed", "failed"]);
      }
    });
  } finally {
    await local.server.close();
  }
  assert(
    errors[0].startsWith("TypeError: waitForActivity() needs an object or an actor"),
    errors[0],
  );
  assert(errors[1].startsWith("TypeError: The type option of waitForActivity()"), errors[1]);
  assert(errors[2].includes("objet") && errors[2].includes("object"), errors[2]);
});

test("an activity the inbox did not verify (skipSignatureVerification) resolves no wait", async () => {
  await using queue = new InProcessMessageQueue();
  const local = await startServer({ queue, skipSignatureVerification: true });
  let unhandled = 0;
  local.federation.on("unhandled", (event) => {
    if (event.kind === "inbox") unhandled++;
  });
  const task = local.federation.defineTask("wait-unverified", {
    schema: z.object({ follow: z.string(), actor: z.string() }),
    handler: async (ctx, data) => {
      const got = await ctx.step.waitForActivity("accepted", {
        type: Accept,
        object: data.follow,
        actor: data.actor,
        timeout: { minutes: 1 },
      });
      return got?.id?.href ?? "timeout";
    },
  });
  const ctx = local.federation.createContext(local.server.url, undefined);
  try {
    await withWorkers(local.federation, async () => {
      const follow = local.url("/follows/unverified").href;
      const actor = "https://remote.example/users/alice";
      const enqueued = await ctx.enqueueTask(task, { follow, actor });
      assert(enqueued.status === "enqueued");
      await statusOf(local.federation, enqueued.messageId, ["retrying"]);
      const body = JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: "https://remote.example/accepts/1",
        type: "Accept",
        actor,
        object: follow,
      });
      const unsigned = await post(local.url("/inbox"), body, null);
      assertEquals(unsigned.status, 202);
      await waitUntil(() => unhandled === 1, { what: "the unsigned Accept to be processed" });
      const [step] = await local.federation.getTaskSteps(enqueued.messageId);
      assertEquals([step.id, step.state], ["accepted", "waiting"]);
      assertEquals((await local.federation.getTaskStatus(enqueued.messageId))?.state, "retrying");
      await local.federation.cancelTask(enqueued.messageId);
      await statusOf(local.federation, enqueued.messageId, ["cancelled"]);
    });
  } finally {
    await local.server.close();
  }
});
