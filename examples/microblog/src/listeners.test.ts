// The microblog's inbox listener and welcome task tested with the app kit
// (@fedwork/testing/app): no worker, no network, no waiting.  The kit's
// federation is a real Fedwork federation whose sendActivity() records and
// whose tasks run when the test moves its clock.
import { Accept, Create, Follow, Note, Person } from "@fedify/vocab";
import { MemoryKvStore } from "@fedwork/core";
import { createFederation } from "@fedwork/testing/app";
import { assert, assertEquals, assertInstanceOf, test } from "@fedify/fixture";
import { createMicroblog } from "./federation.ts";
import { Store } from "./store.ts";

const origin = new URL("https://microblog.example");
const bob = new Person({
  id: new URL("https://remote.example/users/bob"),
  preferredUsername: "bob",
  inbox: new URL("https://remote.example/users/bob/inbox"),
});

async function setUp() {
  const documents = new Map<string, unknown>([[bob.id!.href, await bob.toJsonLd()]]);
  const federation = createFederation<void>({
    origin: origin.href,
    documentLoader: (url) => {
      const document = documents.get(url);
      if (document == null) return Promise.reject(new Error(`No such document: ${url}`));
      return Promise.resolve({ contextUrl: null, document, documentUrl: url });
    },
  });
  const store = new Store(new MemoryKvStore());
  const app = createMicroblog({
    federation,
    origin,
    store,
    allowPrivateAddress: false,
    welcomeDelay: { minutes: 5 },
    digestEvery: { hours: 1 },
  });
  await app.createUser("alice");
  return { federation, store };
}

const follow = new Follow({
  id: new URL("https://remote.example/follows/1"),
  actor: bob.id,
  object: new URL("/users/alice", origin),
});

test("a Follow of a local user is stored, accepted, and the welcome note follows 5 minutes later", async () => {
  const { federation, store } = await setUp();
  await federation.receiveActivity(follow, { recipient: "alice" });

  assertEquals((await store.listFollowers("alice")).map((f) => [f.id, f.handle]), [
    [bob.id!.href, "@bob@remote.example"],
  ]);
  assertEquals(federation.sentActivities.length, 1);
  const [accept] = federation.sentActivities;
  assertInstanceOf(accept.activity, Accept);
  assertEquals(accept.sender, { identifier: "alice" });
  assertEquals(accept.activity.objectId?.href, follow.id!.href);

  // The welcome note is a delayed task: not before its delay.
  assertEquals(federation.pendingMessages.map((m) => m.message.taskName), ["welcome-note"]);
  assertEquals(await federation.clock.advance({ minutes: 4 }), []);
  const runs = await federation.clock.advance({ minutes: 1 });
  assertEquals(runs.map((run) => [run.taskName, run.outcome]), [["welcome-note", "completed"]]);
  assertEquals(federation.sentActivities.length, 2);
  const welcome = federation.sentActivities[1].activity;
  assertInstanceOf(welcome, Create);
  const note = await welcome.getObject();
  assertInstanceOf(note, Note);
  assert(note.content?.toString().includes("Welcome, @bob@remote.example!"), `${note.content}`);
  assertEquals(welcome.toIds.map((id) => id.href), [bob.id!.href]);
});

test("a Follow of a user who does not exist is ignored, and nothing is sent", async () => {
  const { federation, store } = await setUp();
  await federation.receiveActivity(
    new Follow({
      id: new URL("https://remote.example/follows/2"),
      actor: bob.id,
      object: new URL("/users/nobody", origin),
    }),
    { recipient: "nobody" },
  );
  assertEquals(await store.listFollowers("nobody"), []);
  assertEquals(federation.sentActivities, []);
  assertEquals(federation.pendingMessages, []);
});

test("the welcome note is not sent to a follower who unfollowed before it was due", async () => {
  const { federation, store } = await setUp();
  await federation.receiveActivity(follow, { recipient: "alice" });
  await store.removeFollower("alice", bob.id!.href);
  federation.reset();
  const runs = await federation.clock.advance({ minutes: 5 });
  assertEquals(runs.map((run) => run.outcome), ["completed"]);
  assertEquals(federation.sentActivities, []);
});
