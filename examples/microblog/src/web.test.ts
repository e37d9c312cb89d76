// The web handler facing a hostile world, called in process: what anyone
// may read, cross-site requests, and what an error answer tells.
import { assert, assertEquals, assertMatch, test, withLogs } from "@fedify/fixture";
import { InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";
import { createMicroblog } from "./federation.ts";
import type { UserState } from "./scenario.ts";
import { type ReceivedNote, Store } from "./store.ts";
import type { Visibility } from "./visibility.ts";
import { createFetchHandler } from "./web.ts";

const ORIGIN = new URL("https://microblog.example");
const TOKEN = "the-api-token";

/** A microblog with alice, in memory, and its handler. */
async function startApp(apiToken?: string) {
  const queue = new InProcessMessageQueue();
  const store = new Store(new MemoryKvStore());
  const app = createMicroblog({
    origin: ORIGIN,
    store,
    kv: new MemoryKvStore(),
    queue,
    allowPrivateAddress: false,
    welcomeDelay: { seconds: 1 },
    digestEvery: { hours: 1 },
  });
  await app.createUser("alice");
  const fetch = createFetchHandler(app, { apiToken });
  return {
    app,
    store,
    fetch: (path: string, init?: RequestInit) => fetch(new Request(new URL(path, ORIGIN), init)),
    async [Symbol.asyncDispose]() {
      await queue[Symbol.asyncDispose]();
    },
  };
}

const received = (visibility: Visibility, content: string): ReceivedNote => ({
  id: `https://remote.example/notes/${visibility}`,
  from: "https://remote.example/users/mallory",
  content: `<p>${content}</p>`,
  visibility,
  receivedAt: new Date().toISOString(),
});

/** alice's post and one received note of each visibility. */
async function addNotes(app: Awaited<ReturnType<typeof startApp>>): Promise<void> {
  await app.app.post("alice", "A public post by alice");
  await app.store.addReceivedNote("alice", received("public", "A public note"));
  await app.store.addReceivedNote("alice", received("unlisted", "An unlisted note"));
  await app.store.addReceivedNote("alice", received("followers", "A followers-only secret"));
  await app.store.addReceivedNote("alice", received("direct", "A direct secret"));
}

test("the profile page and the API show anyone public and unlisted notes, never followers-only or direct ones", async () => {
  for (const apiToken of [undefined, TOKEN]) {
    await using app = await startApp(apiToken);
    await addNotes(app);
    const page = await (await app.fetch("/users/alice", { headers: { Accept: "text/html" } }))
      .text();
    const api = await (await app.fetch("/api/users/alice")).text();
    for (const [what, text] of [["page", page], ["API", api]]) {
      for (const shown of ["A public post by alice", "A public note", "An unlisted note"]) {
        assert(text.includes(shown), `the ${what} (token: ${apiToken}) lacks "${shown}"`);
      }
      assertEquals(text.includes("secret"), false, `the ${what} (token: ${apiToken}) leaks`);
    }
  }
});

test("only the API token lets the API list a user's followers-only and direct notes", async () => {
  await using app = await startApp(TOKEN);
  await addNotes(app);
  const owner = await app.fetch("/api/users/alice", {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assertEquals(
    ((await owner.json()) as UserState).received.map((note) => note.visibility).sort(),
    ["direct", "followers", "public", "unlisted"],
  );
  const wrong = await app.fetch("/api/users/alice", {
    headers: { Authorization: "Bearer not-the-token" },
  });
  assertEquals(wrong.status, 401);
  assertEquals(await wrong.text(), JSON.stringify({ error: "A valid bearer token is required." }));
});

test("the API refuses a cross-site request with 403 and creates no note, with or without API_TOKEN", async () => {
  const json = JSON.stringify({ content: "Forged" });
  const forged: [string, RequestInit][] = [
    // What a cross-site <form enctype="text/plain"> sends.
    ["a text/plain form", {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: `{"content":"Forged","x":"="}`,
    }],
    ["a urlencoded form", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "content=Forged",
    }],
    ["no content type", { method: "POST", body: json }],
    ["Sec-Fetch-Site: cross-site", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site" },
      body: json,
    }],
    ["Sec-Fetch-Site: same-site", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-site" },
      body: json,
    }],
    ["a foreign Origin", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "https://evil.example" },
      body: json,
    }],
    ["Origin: null", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "null" },
      body: json,
    }],
    ["a cross-site PUT", {
      method: "PUT",
      headers: { "Content-Type": "application/json", Origin: "https://evil.example" },
      body: json,
    }],
    ["a cross-site DELETE", { method: "DELETE", headers: { "Sec-Fetch-Site": "cross-site" } }],
  ];
  for (const apiToken of [undefined, TOKEN]) {
    await using app = await startApp(apiToken);
    for (const [what, init] of forged) {
      // Even the right token does not make a cross-site request acceptable.
      const headers = new Headers(init.headers);
      if (apiToken != null) headers.set("Authorization", `Bearer ${apiToken}`);
      const response = await app.fetch("/api/users/alice/posts", { ...init, headers });
      assertEquals(response.status, 403, `${what} (token: ${apiToken})`);
      assertEquals(await response.json(), {
        error: "The API takes same-origin application/json requests only.",
      });
    }
    assertEquals(await app.store.listPosts("alice"), [], `token: ${apiToken}`);
  }
});

test("a same-origin JSON POST to the API still creates a note", async () => {
  for (const apiToken of [undefined, TOKEN]) {
    await using app = await startApp(apiToken);
    const authorization: Record<string, string> = apiToken == null
      ? {}
      : { Authorization: `Bearer ${apiToken}` };
    // From the app's own page, and from a program that sends neither header.
    const senders: Record<string, string>[] = [
      { Origin: ORIGIN.origin, "Sec-Fetch-Site": "same-origin" },
      {},
    ];
    for (const headers of senders) {
      const response = await app.fetch("/api/users/alice/posts", {
        method: "POST",
        headers: {
          "Content-Type": "application/json; charset=utf-8",
          ...headers,
          ...authorization,
        },
        body: JSON.stringify({ content: "Hello" }),
      });
      assertEquals(response.status, 201, `token: ${apiToken}`);
      assertMatch(
        (await response.json() as { url: string }).url,
        /^https:\/\/microblog\.example\//,
      );
    }
    assertEquals((await app.store.listPosts("alice")).length, 2);
  }
});

test("an invalid API request gets a generic message, and the details go to the log", async () => {
  await using app = await startApp();
  const post = (action: string, body: string) =>
    app.fetch(`/api/users/alice/${action}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    });
  await withLogs(async (records) => {
    // follow() throws "… is not an actor."; the client must not read it.
    const failed = await post("follow", JSON.stringify({ target: "not a handle" }));
    assertEquals(failed.status, 422);
    assertEquals(
      await failed.text(),
      JSON.stringify({ error: "The request could not be carried out." }),
    );
    const logged = records.find((record) => record.properties.action === "follow");
    assert(logged != null, "the failure was not logged");
    assertMatch(String(logged.properties.error), /not a handle is not an actor/);
  });
  for (
    const [body, expected] of [
      [JSON.stringify({ content: 42 }), { error: "The request is invalid.", field: "content" }],
      [JSON.stringify({ content: " " }), { error: "The request is invalid.", field: "content" }],
      [
        JSON.stringify({ content: "x".repeat(5_001) }),
        { error: "The request is invalid.", field: "content" },
      ],
      ["null", { error: "The request is invalid." }],
      ["[1, 2]", { error: "The request is invalid." }],
      ["{not json", { error: "The request is invalid." }],
      [JSON.stringify({ content: "x".repeat(70_000) }), {
        error: "The request body is too large.",
      }],
    ] as const
  ) {
    const response = await post("posts", body);
    assertEquals(await response.json(), expected, body.slice(0, 40));
    assertEquals(response.status >= 400 && response.status < 500, true);
  }
  const unknown = await app.fetch("/api/users/nobody%zz");
  assertEquals([unknown.status, await unknown.json()], [404, { error: "Not found." }]);
  assertEquals(await app.store.listPosts("alice"), []);
});
