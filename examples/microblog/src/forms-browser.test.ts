// The forms in a real browser (the system's headless Chromium, driven by
// playwright-core) against two real servers on loopback, each with
// API_TOKEN: alice signs in, posts a note, follows bob on the other server
// by his handle and likes his note, all by filling in and submitting the
// pages' forms; and a page of another site, open in the same signed-in
// browser, cannot post as alice.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertEquals, assertMatch, startTestServer, test, waitUntil } from "@fedify/fixture";
import { launchChromium } from "@fedify/fixture/browser";
import { startInstance } from "./instance.ts";
import { call, readState, type ScenarioUser } from "./scenario.ts";

const TOKEN = "a-long-random-api-token-for-the-forms-test";

test("in a browser, alice signs in, posts, follows bob on another server and likes his note through the forms", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-microblog-forms-"));
  try {
    const common = { apiToken: TOKEN, pollIntervalMs: 50, welcomeDelay: { seconds: 1 } };
    await using alice = await startInstance({
      ...common,
      name: "alice",
      dataDir: join(dataDir, "alice"),
      users: ["alice"],
    });
    await using bob = await startInstance({
      ...common,
      name: "bob",
      dataDir: join(dataDir, "bob"),
      users: ["bob"],
    });
    const aliceApi: ScenarioUser = { origin: alice.url, name: "alice", apiToken: TOKEN };
    const bobApi: ScenarioUser = { origin: bob.url, name: "bob", apiToken: TOKEN };
    const profile = new URL("/users/alice", alice.url).href;
    const browser = await launchChromium(join(dataDir, "chromium-profile"));
    try {
      const page = await browser.newPage();
      // Signed out, the profile has no forms.
      await page.goto(profile);
      assertEquals(await page.locator("form#compose").count(), 0);
      await page.getByRole("link", { name: "Sign in" }).click();
      await page.waitForURL(new URL("/login", alice.url).href);

      await page.locator("#login-token").fill("not-the-token");
      await page.getByRole("button", { name: "Sign in" }).click();
      assertEquals(
        await page.locator("#login-error").textContent(),
        "That is not this server's API token.",
      );
      await page.locator("#login-token").fill(TOKEN);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(new URL("/", alice.url).href);
      assertMatch(await page.locator(".session").innerText(), /Signed in/);
      const [cookie] = await browser.cookies(alice.url.href);
      assertEquals([cookie.httpOnly, cookie.sameSite], [true, "Lax"]);

      // Compose.
      await page.goto(profile);
      await page.locator("#compose-content").fill("Hello from a form, <b>escaped</b>");
      await page.locator("form#compose").getByRole("button", { name: "Post" }).click();
      await page.waitForURL(/\?notice=posted$/);
      assertEquals(await page.locator("#notice").textContent(), "Posted.");
      assertEquals(await page.locator("#post-count").textContent(), "1");
      assertEquals(
        await page.locator("article.post p").first().innerText(),
        "Hello from a form, <b>escaped</b>",
      );

      // Follow bob, on the other server, by his handle.
      const bobHandle = `@bob@${bob.url.host}`;
      await page.locator("#follow-target").fill(bobHandle);
      await page.locator("form#follow").getByRole("button", { name: "Follow" }).click();
      await page.waitForURL(/\?notice=followed$/);
      await waitUntil(
        async () => (await readState(aliceApi)).following.some((f) => f.state === "accepted"),
        { what: "bob's server to accept alice's Follow" },
      );
      await page.reload();
      assertMatch(
        await page.locator("li.following").innerText(),
        new RegExp(`${new URL("/users/bob", bob.url).href} \\(accepted\\)`),
      );

      // Like the note bob posts to his followers.
      const bobPost = await call(bobApi, "posts", { content: "A note for alice to like" }) as {
        id: string;
        url: string;
      };
      await waitUntil(
        async () => (await readState(aliceApi)).received.some((n) => n.id === bobPost.url),
        { what: "bob's note to reach alice" },
      );
      await page.goto(profile);
      const received = page.locator(`article.received[data-id="${bobPost.url}"]`);
      assertMatch(await received.innerText(), /A note for alice to like/);
      await received.getByRole("button", { name: "Like" }).click();
      await page.waitForURL(/\?notice=liked$/);
      assertEquals(await page.locator("#notice").textContent(), "Like sent.");
      await waitUntil(
        async () =>
          (await readState(bobApi)).posts.find((post) => post.id === bobPost.id)?.likes === 1,
        { what: "bob's server to count alice's like" },
      );

      // A like of something that is not a note says so, in fixed words.
      await page.locator("#like-object").fill(new URL("/nothing-here", bob.url).href);
      await page.locator("form#like").getByRole("button", { name: "Like" }).click();
      await page.waitForURL(/\?notice=failed$/);
      assertMatch(await page.locator("#notice").innerText(), /That did not work/);

      // A page on another site, in the same signed-in browser, posts a
      // form to alice's server: refused, whatever it guesses.
      const action = new URL("/forms/alice/posts", alice.url).href;
      await using attacker = await startTestServer(() =>
        new Response(
          `<!doctype html><form method="POST" action="${action}">
<input type="hidden" name="csrf" value="guessed"><input type="hidden" name="content" value="Forged by a form">
</form><script>document.forms[0].submit();</script>`,
          { headers: { "Content-Type": "text/html; charset=utf-8" } },
        )
      );
      // localhost is another site than 127.0.0.1; another port of
      // 127.0.0.1 is the same site (the cookie goes along), another origin.
      for (const host of ["localhost", "127.0.0.1"]) {
        const from = new URL(`/${host}`, attacker.url);
        from.hostname = host;
        const [response] = await Promise.all([
          page.waitForResponse(action),
          page.goto(from.href),
        ]);
        assertEquals(response.status(), 403, `a form on ${from.origin}`);
      }
      assertEquals((await readState(aliceApi)).posts.map((post) => post.content), [
        "Hello from a form, <b>escaped</b>",
      ]);

      // Signing out ends the session: the forms go away.
      await page.goto(profile);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(new URL("/", alice.url).href);
      await page.goto(profile);
      assertEquals(await page.locator("form#compose").count(), 0);
    } finally {
      await browser.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
