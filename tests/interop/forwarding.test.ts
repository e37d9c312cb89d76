// Forwarded activities between Fedwork and a real Fedify 2.3.6 server on
// loopback: Alice's server sends a Create to Carol's, whose listener
// forwards it, signed by Carol, to Bob's.  Bob's server trusts it through
// the Object Integrity Proof Alice's server put on it.
import { assertEquals, test } from "@fedify/fixture";
import { Create, Note, PUBLIC_COLLECTION } from "@fedify/vocab";
import { startFedifyApp, startFedworkApp, type TestApp } from "./apps.ts";
import { until, within } from "./support.ts";

function reply(origin: TestApp, thread: TestApp, id: string): Create {
  const alice = origin.url("/users/alice");
  return new Create({
    id: origin.url(`/creates/${id}`),
    actor: alice,
    to: PUBLIC_COLLECTION,
    object: new Note({
      id: origin.url(`/notes/${id}`),
      attribution: alice,
      to: PUBLIC_COLLECTION,
      replyTarget: thread.url("/notes/thread"),
      content: `A reply (${id})`,
    }),
  });
}

/** Sends Alice's reply to Carol, on the forwarder. */
function sendToCarol(origin: TestApp, forwarder: TestApp, thread: TestApp, id: string) {
  return origin.send(
    "alice",
    { id: forwarder.url("/users/carol"), inboxId: forwarder.url("/users/carol/inbox") },
    reply(origin, thread, id),
  );
}

/** The statuses Bob's inbox answered. */
function bobsStatuses(app: TestApp): number[] {
  return app.posts.filter((post) => post.path === "/users/bob/inbox").map((post) => post.status);
}

test("a reply a Fedify server forwards reaches a Fedwork listener, verified by its proof", async () => {
  await using fedwork = await startFedworkApp();
  const bob = () => ({ id: fedwork.url("/users/bob"), inboxId: fedwork.url("/users/bob/inbox") });
  await using forwarder = await startFedifyApp({ forwardCreatesTo: bob });
  await using origin = await startFedifyApp();
  await sendToCarol(origin, forwarder, fedwork, "fedify");
  const note = await within(fedwork.notes, "Fedwork to receive the forwarded reply");
  assertEquals(note.id?.href, origin.url("/notes/fedify").href);
  await until(() => bobsStatuses(fedwork).length > 0, "Bob's inbox to answer");
  assertEquals(bobsStatuses(fedwork), [202]);
});

test("a reply Fedwork forwards reaches a Fedify listener, verified by its proof", async () => {
  await using fedify = await startFedifyApp();
  const bob = () => ({ id: fedify.url("/users/bob"), inboxId: fedify.url("/users/bob/inbox") });
  await using forwarder = await startFedworkApp({ forwardCreatesTo: bob });
  await using origin = await startFedworkApp();
  await sendToCarol(origin, forwarder, fedify, "fedwork");
  const note = await within(fedify.notes, "Fedify to receive the forwarded reply");
  assertEquals(note.id?.href, origin.url("/notes/fedwork").href);
  await until(() => bobsStatuses(fedify).length > 0, "Bob's inbox to answer");
  assertEquals(bobsStatuses(fedify), [202]);
});
