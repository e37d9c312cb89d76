// A real browser (the system's headless Chromium, driven by playwright-core)
// opens bob's profile at his actor URL after the demo's scenario: content
// negotiation must give it the HTML page with the post and the follower.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertEquals, assertMatch, test } from "@fedify/fixture";
import { launchChromium } from "@fedify/fixture/browser";
import { startDemo } from "./demo.ts";
import { runScenario } from "./scenario.ts";

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
