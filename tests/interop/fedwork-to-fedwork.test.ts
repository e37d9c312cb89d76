// Two Fedwork servers on loopback, each with its own SQLite queue, follow
// each other and exchange a note over signed HTTP: the whole path from
// sendActivity() through the outbox queue, signed delivery, inbox
// verification and the inbox queue to the listener.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertEquals, test } from "@fedify/fixture";
import { Create, Follow, Note, PUBLIC_COLLECTION } from "@fedify/vocab";
import { SqliteMessageQueue } from "@fedwork/sqlite";
import { startFedworkApp } from "./apps.ts";
import { until, within } from "./support.ts";

test("two Fedwork servers follow each other and exchange a note through SQLite queues", async () => {
  const directory = await mkdtemp(join(tmpdir(), "fedwork-two-servers-"));
  const queue = (name: string) =>
    new SqliteMessageQueue({
      path: join(directory, `${name}.sqlite`),
      pollInterval: { milliseconds: 50 },
    });
  await using aliceQueue = queue("alice");
  await using bobQueue = queue("bob");
  try {
    await using alice = await startFedworkApp({ queue: aliceQueue });
    await using bob = await startFedworkApp({ queue: bobQueue });
    const bobUri = bob.url("/users/bob");
    await alice.send(
      "alice",
      { id: bobUri, inboxId: bob.url("/users/bob/inbox") },
      new Follow({
        id: alice.url("/follows/1"),
        actor: alice.url("/users/alice"),
        object: bobUri,
      }),
    );
    // Bob's listener stored alice as a follower and sent back an Accept.
    const accept = await within(alice.accepted, "alice to receive the Accept");
    assertEquals(accept.actorId?.href, bobUri.href);
    // The embedded Follow is on alice's origin: reading it would refetch it,
    // so look at its id only.
    assertEquals(accept.objectId?.href, alice.url("/follows/1").href);
    assertEquals([...bob.followers.keys()], [alice.url("/users/alice").href]);

    await bob.send(
      "bob",
      "followers",
      new Create({
        id: bob.url("/creates/1"),
        actor: bobUri,
        to: PUBLIC_COLLECTION,
        object: new Note({
          id: bob.url("/notes/1"),
          attribution: bobUri,
          to: PUBLIC_COLLECTION,
          content: "Hello, followers!",
        }),
      }),
    );
    const note = await within(alice.notes, "alice to receive bob's note");
    assertEquals(note.content?.toString(), "Hello, followers!");
    assertEquals(note.id?.href, bob.url("/notes/1").href);
    // Every delivery was signed and accepted.
    await until(() => alice.posts.length === 2, "both responses to be recorded");
    assertEquals(alice.posts.map((post) => [post.spec, post.status]), [
      ["rfc9421", 202],
      ["rfc9421", 202],
    ]);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
