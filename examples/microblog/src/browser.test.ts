// A real browser (the system's headless Chromium, driven by playwright-core)
// opens bob's profile at his actor URL after the demo's scenario: content
// negotiation must give it the HTML page with the post and the follower.
// And a page of another site, open in that browser, cannot post as a user.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertEquals, assertMatch, startTestServer, test } from "@fedify/fixture";
import { launchChromium } from "@fedify/fixture/browser";
import { startDemo } from "./demo.ts";
import { startInstance } from "./instance.ts";
import { readState, runScenario } from "./scenario.ts";

test("a browser opening bob's actor URL sees his posts and followers", async () => {
  // CI installs it (scripts/ensure-services.sh); say so rather than time out.
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-microblog-browser-"));
  try {
    await using demo = await startDemo({ dataDir, welcomeDelaySeconds: 1 });
    const result = await runScenario({
      alice: { origin: demo.alice.url, name: "alice", apiToken: demo.apiToken },
      bob: { origin: demo.bob.url, name: "bob", apiToken: demo.apiToken },
      linkUrl: demo.linkUrl,
    });
    const browser = await launchChromium(join(dataDir, "chromium-profile"));
    try {
      const page = await browser.newPage();
      const response = await page.goto(result.bob.url);
      assertEquals(response?.status(), 200);
      assertMatch(response?.headers()["content-type"] ?? "", /^text\/html/);
      assertEquals(await page.locator("h1").textContent(), "bob");
      assertEquals(await page.locator("#post-count").textContent(), "1");
      const post = page.locator("article.post");
      assertMatch(await post.innerText(), /Hello, fediverse! Typed tasks:/);
      assertEquals(
        await post.locator(".preview a").textContent(),
        "Fedwork: typed tasks for the fediverse",
      );
      assertMatch(await post.locator(".meta").innerText(), /1 likes/);
      assertEquals(await page.locator("#followers li").allTextContents(), [
        `@alice@${demo.alice.url.host}`,
      ]);
      // The post's link leads to its own page, by the note's URL.
      await post.locator(".meta a").click();
      await page.waitForURL(result.bob.posts[0].url);
      assertMatch(await page.locator("article.post").innerText(), /Hello, fediverse!/);
    } finally {
      await browser.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("a form on another site, submitted by a browser, cannot post as a user without API_TOKEN", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-microblog-browser-"));
  try {
    // No API token: what someone trying the example on their machine runs.
    await using carol = await startInstance({
      name: "carol",
      dataDir: join(dataDir, "carol"),
      users: ["carol"],
    });
    const api = new URL("/api/users/carol/posts", carol.url).href;
    const forms = new URL("/forms/carol/posts", carol.url).href;
    await using attacker = await startTestServer((request) =>
      new Response(
        new URL(request.url).pathname.endsWith("/forms")
          // The page's own form, guessed: the forms are open to anyone here.
          ? `<!doctype html><form method="POST" action="${forms}">
<input type="hidden" name="csrf" value="guessed"><input type="hidden" name="content" value="Forged by a form"></form>
<script>document.forms[0].submit();</script>`
          // The classic JSON CSRF: a text/plain form whose one field, name
          // and value joined by "=", is a JSON object.
          : `<!doctype html><form method="POST" action="${api}" enctype="text/plain">
<input type="hidden" name='{"content":"Forged by a form","x":"' value='"}'></form>
<script>document.forms[0].submit();</script>`,
        { headers: { "Content-Type": "text/html; charset=utf-8" } },
      )
    );
    const browser = await launchChromium(join(dataDir, "chromium-profile"));
    try {
      const page = await browser.newPage();
      // carol's page first, so that the browser holds her session cookie.
      await page.goto(new URL("/users/carol", carol.url).href);
      assertEquals(await page.locator("form#compose").count(), 1);
      // localhost is another site than 127.0.0.1; another port of
      // 127.0.0.1 is the same site, a different origin.
      for (const [target, kind] of [[api, "api"], [forms, "forms"]]) {
        for (const host of ["localhost", "127.0.0.1"]) {
          const from = new URL(`/${host}/${kind}`, attacker.url);
          from.hostname = host;
          const [response] = await Promise.all([
            page.waitForResponse(target),
            page.goto(from.href),
          ]);
          assertEquals(response.status(), 403, `a form on ${from.origin} to ${target}`);
        }
      }
    } finally {
      await browser.close();
    }
    assertEquals((await readState({ origin: carol.url, name: "carol" })).posts, []);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
