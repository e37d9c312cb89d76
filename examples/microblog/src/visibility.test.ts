import { assertEquals, test } from "@fedify/fixture";
import { MemoryKvStore } from "@fedwork/core";
import { Note, PUBLIC_COLLECTION } from "@fedify/vocab";
import { Store } from "./store.ts";
import { noteVisibility } from "./visibility.ts";

test("noteVisibility reads public, unlisted, followers-only and direct from a note's addressing", () => {
  const alice = new URL("https://microblog.example/users/alice");
  const followers = new URL("https://remote.example/users/bob/followers");
  const note = (to: URL[], cc: URL[] = []) =>
    new Note({ id: new URL("https://remote.example/notes/1"), tos: to, ccs: cc });
  assertEquals(noteVisibility(note([PUBLIC_COLLECTION], [followers]), alice), "public");
  assertEquals(noteVisibility(note([followers], [PUBLIC_COLLECTION]), alice), "unlisted");
  assertEquals(noteVisibility(note([followers]), alice), "followers");
  assertEquals(noteVisibility(note([followers], [alice]), alice), "direct");
  assertEquals(noteVisibility(note([alice]), alice), "direct");
  assertEquals(noteVisibility(note([]), alice), "followers");
});

test("a received note stored before visibility was recorded stays hidden unless it was public", async () => {
  const kv = new MemoryKvStore();
  const store = new Store(kv);
  const old = (id: string, direct: boolean) =>
    kv.set(["received", "alice", `2026-01-01T00:00:0${id}.000Z`, id], {
      id,
      from: "https://remote.example/users/bob",
      content: "<p>Hi</p>",
      direct,
      receivedAt: `2026-01-01T00:00:0${id}.000Z`,
    });
  await old("1", false);
  await old("2", true);
  assertEquals(
    (await store.listReceivedNotes("alice", "anyone")).map((note) => [note.id, note.visibility]),
    [["1", "public"]],
  );
  assertEquals(
    (await store.listReceivedNotes("alice", "owner")).map((note) => [note.id, note.visibility]),
    [["1", "public"], ["2", "direct"]],
  );
});
