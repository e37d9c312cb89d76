// A small federation inside the Worker: WebFinger and an actor through
// federation.fetch(); a typed task carrying a Note, enqueued through
// WorkersMessageQueue and run by this Worker's queue() consumer with
// processQueueBatch(); and a signed Follow/Accept with the Fedwork server
// on Node.js that scripts/workerd-tests.ts started (tests/workerd/src/
// node-peer.ts), over real HTTP both ways.  Federations are built inside
// the test bodies: Workers forbid timers and random values at a module's
// top level.  The address guard is opened for loopback (both servers are
// on 127.0.0.1), as in the other tests that federate locally.
import { assert, assertEquals, deferred, test, within } from "@fedify/fixture";
import { Accept, Follow, isActor, Note, Person } from "@fedify/vocab";
import { processQueueBatch, WorkersMessageQueue } from "@fedwork/cfworkers";
import { createFederation, MemoryKvStore, toTemporalDuration } from "@fedwork/core";
import { consumeQueue, serveRequests, workerEnv } from "../harness/bindings.ts";
import { oneActorFederation } from "../one-actor-federation.ts";

// Bounds an event that never comes; not a speed check.
const EVENT_TIMEOUT_MS = 30_000;

/** A task's payload: a vocabulary object, rebuilt by the task codec. */
interface NotePayload {
  readonly run: string;
  readonly note: Note;
}

const notePayloadSchema: {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => { readonly value: NotePayload } | { readonly issues: { message: string }[] };
    readonly types?: { readonly input: NotePayload; readonly output: NotePayload };
  };
} = {
  "~standard": {
    version: 1,
    vendor: "fedwork-workerd-tests",
    validate: (value) => {
      const payload = value as Partial<NotePayload> | null;
      return typeof payload?.run === "string" && payload.note instanceof Note
        ? { value: payload as NotePayload }
        : { issues: [{ message: "Expected { run: string, note: Note }." }] };
    },
  },
};

test("a federation inside workerd serves WebFinger and an actor", async () => {
  const { WORKER_ORIGIN } = workerEnv();
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "alice"
        ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier })
        : null,
  );
  const host = new URL(WORKER_ORIGIN).host;
  const webfinger = await federation.fetch(
    new Request(`${WORKER_ORIGIN}/.well-known/webfinger?resource=acct:alice@${host}`),
    { contextData: undefined },
  );
  assertEquals(webfinger.status, 200);
  assertEquals(await webfinger.json(), {
    subject: `acct:alice@${host}`,
    aliases: [`${WORKER_ORIGIN}/users/alice`],
    links: [{
      rel: "self",
      type: "application/activity+json",
      href: `${WORKER_ORIGIN}/users/alice`,
    }],
  });
  const actor = await federation.fetch(
    new Request(`${WORKER_ORIGIN}/users/alice`, {
      headers: { accept: "application/activity+json" },
    }),
    { contextData: undefined },
  );
  assertEquals(actor.status, 200);
  const body = await actor.json() as { id: string; preferredUsername: string };
  assertEquals([body.id, body.preferredUsername], [`${WORKER_ORIGIN}/users/alice`, "alice"]);
  const unknown = await federation.fetch(
    new Request(`${WORKER_ORIGIN}/users/bob`, {
      headers: { accept: "application/activity+json" },
    }),
    { contextData: undefined },
  );
  assertEquals(unknown.status, 404);
});

test("a typed task carrying a Note runs in the Worker's queue() consumer, retried once", async () => {
  const { QUEUE, WORKER_ORIGIN } = workerEnv();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new WorkersMessageQueue(QUEUE),
    manuallyStartQueue: true,
  });
  const run = crypto.randomUUID();
  const attempts: { attempt: number; content: string; noteId: string | undefined }[] = [];
  const done = deferred<void>();
  const task = federation.defineTask("workerd-note", {
    schema: notePayloadSchema,
    // The retry goes back through the Cloudflare queue a second later.
    retryPolicy: ({ attempts }) => attempts <= 2 ? toTemporalDuration({ seconds: 1 }) : null,
    handler(ctx, payload) {
      if (payload.run !== run) return;
      attempts.push({
        attempt: ctx.task.attempt,
        content: String(payload.note.content),
        noteId: payload.note.id?.href,
      });
      if (ctx.task.attempt === 0) throw new Error("The first attempt fails on purpose.");
      done.resolve();
    },
  });
  using _consumer = consumeQueue(async (batch) => {
    await processQueueBatch(batch, { federation, contextData: undefined });
  });
  const ctx = federation.createContext(new URL(WORKER_ORIGIN), undefined);
  const note = new Note({
    id: new URL(`${WORKER_ORIGIN}/notes/${run}`),
    content: "Hello from a Cloudflare queue",
  });
  await ctx.enqueueTask(task, { run, note });
  await within(
    done.promise,
    () => `the task's second attempt; saw ${JSON.stringify(attempts)}`,
    EVENT_TIMEOUT_MS,
  );
  assertEquals(attempts, [
    { attempt: 0, content: "Hello from a Cloudflare queue", noteId: note.id!.href },
    { attempt: 1, content: "Hello from a Cloudflare queue", noteId: note.id!.href },
  ]);
});

test("the Worker follows an actor on a Fedwork server on Node.js and verifies its signed Accept", async () => {
  const { WORKER_ORIGIN, NODE_ORIGIN } = workerEnv();
  const federation = await oneActorFederation("alice");
  const accepted = deferred<Accept>();
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Accept, (_ctx, accept) => accepted.resolve(accept));
  // The Node.js server fetches alice and her key, and posts its Accept,
  // over HTTP to this Worker.
  using _server = serveRequests((request) => federation.fetch(request, { contextData: undefined }));

  // An unsigned Accept is refused: the listener only sees verified ones.
  const unsigned = await fetch(`${WORKER_ORIGIN}/users/alice/inbox`, {
    method: "POST",
    headers: { "content-type": "application/activity+json" },
    body: JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      type: "Accept",
      id: `${NODE_ORIGIN}/users/bob#forged`,
      actor: `${NODE_ORIGIN}/users/bob`,
      object: `${WORKER_ORIGIN}/follows/forged`,
    }),
  });
  assertEquals(unsigned.status, 401, await unsigned.text());

  const ctx = federation.createContext(new URL(WORKER_ORIGIN), undefined);
  const bob = await ctx.lookupObject(`${NODE_ORIGIN}/users/bob`);
  assert(isActor(bob), `expected bob to be an actor; got ${bob}`);
  const follow = new Follow({
    id: new URL(`${WORKER_ORIGIN}/follows/${crypto.randomUUID()}`),
    actor: ctx.getActorUri("alice"),
    object: bob.id,
  });
  await ctx.sendActivity({ identifier: "alice" }, bob, follow);
  const accept = await within(accepted.promise, "bob's Accept", EVENT_TIMEOUT_MS);
  assertEquals(accept.actorId?.href, `${NODE_ORIGIN}/users/bob`);
  // The Accept names the Follow the Worker sent.
  assertEquals(accept.objectId?.href, follow.id?.href);
});
