// The demo's scenario, end to end through two servers' real HTTP ports and
// their SQLite queues, on each runtime.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assert, assertEquals, assertMatch, test, waitUntil } from "@fedify/fixture";
import { startDemo } from "./demo.ts";
import { call, readState, runScenario } from "./scenario.ts";

test("two microblogs follow, post, preview, like, welcome in private, digest and unfollow over HTTP", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-microblog-test-"));
  try {
    await using demo = await startDemo({ dataDir, welcomeDelaySeconds: 1, digestEverySeconds: 1 });
    const alice = { origin: demo.alice.url, name: "alice", apiToken: demo.apiToken };
    const bob = { origin: demo.bob.url, name: "bob", apiToken: demo.apiToken };
    const result = await runScenario({ alice, bob, linkUrl: demo.linkUrl });

    const [post] = result.bob.posts;
    assertEquals(result.bob.posts.length, 1);
    assertEquals(post.preview, {
      url: demo.linkUrl,
      title: "Fedwork: typed tasks for the fediverse",
    });
    assertEquals(post.likes, 1);
    assertEquals(result.bob.followers.map((f) => f.handle), [`@alice@${demo.alice.url.host}`]);
    assertEquals(result.alice.following.map((f) => [f.id, f.state]), [[
      result.bob.url,
      "accepted",
    ]]);
    // The public note and the direct welcome note, each once.
    const received = result.alice.received.map((note) => [note.id, note.visibility]);
    assertEquals(received.filter(([, visibility]) => visibility !== "direct"), [[
      post.url,
      "public",
    ]]);
    assertEquals(received.filter(([, visibility]) => visibility === "direct").length, 1);

    // The welcome note is direct: alice's API lists it with the token only,
    // her page never, and bob does not serve it to whoever asks.
    const welcome = result.alice.received.find((note) => note.visibility === "direct")!;
    assertMatch(welcome.content, /Welcome, @alice@/);
    const page = await fetch(new URL("/users/alice", demo.alice.url), {
      headers: { Accept: "text/html" },
    });
    const anonymous = await fetch(new URL("/api/users/alice", demo.alice.url));
    for (const text of [await page.text(), await anonymous.text()]) {
      assertMatch(text, /Hello, fediverse!/);
      assertEquals(text.includes("Welcome,"), false);
    }
    const fetched = await fetch(welcome.id, { headers: { Accept: "application/activity+json" } });
    assertEquals(fetched.status, 404);
    await fetched.body?.cancel();

    // The followers collection as a server sees it.
    const response = await fetch(new URL("/users/bob/followers", demo.bob.url), {
      headers: { Accept: "application/activity+json" },
    });
    const collection = await response.json();
    assertEquals(collection.totalItems, 1);
    assertEquals(collection.orderedItems, [result.alice.url]);

    // A POST without the bearer token is refused.
    const refused = await fetch(new URL("/api/users/bob/posts", demo.bob.url), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ content: "Not me" }),
    });
    assertEquals(refused.status, 401);
    await refused.body?.cancel();
    assert((await readState(bob)).posts.length === 1);

    // The scheduled digest ran and shows on the home page.
    await waitUntil(async () => {
      const home = await (await fetch(demo.bob.url)).text();
      return /Digest of .*: 1 users, 1 posts, 1 followers\./.test(home);
    }, { what: "bob's digest to run", intervalMs: 100 });

    // Undo(Follow): bob forgets alice, and alice no longer follows bob.
    await call(alice, "unfollow", { target: result.bob.url });
    await waitUntil(async () => (await readState(bob)).followers.length === 0, {
      what: "bob to drop alice after her Undo(Follow)",
      intervalMs: 50,
    });
    assertEquals((await readState(alice)).following, []);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
