import { assertEquals, test } from "@fedify/fixture";
import { Note } from "@fedify/vocab";
import { respondWithObject, respondWithObjectIfAcceptable } from "./respond.ts";

const note = new Note({ id: new URL("https://example.com/notes/1"), content: "Hello" });

test("respondWithObject() answers the object as compact ActivityPub JSON", async () => {
  const response = await respondWithObject(note);
  assertEquals(response.status, 200);
  assertEquals(response.headers.get("content-type"), "application/activity+json");
  assertEquals(response.headers.get("vary"), "Accept");
  const document = await response.json();
  assertEquals(document.id, "https://example.com/notes/1");
  assertEquals(document.type, "Note");
  assertEquals(document.content, "Hello");
  assertEquals(document["@context"] != null, true);
});

test("respondWithObjectIfAcceptable() answers null to a browser and JSON to a fediverse server", async () => {
  const browser = new Request("https://example.com/notes/1", {
    headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
  });
  assertEquals(await respondWithObjectIfAcceptable(note, browser), null);
  const server = new Request("https://example.com/notes/1", {
    headers: { Accept: "application/activity+json" },
  });
  const response = await respondWithObjectIfAcceptable(note, server);
  assertEquals((await response?.json())?.id, "https://example.com/notes/1");
});
