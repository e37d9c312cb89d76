import { assertEquals, assertMatch, test } from "@fedify/fixture";
import { firstLink } from "./federation.ts";
import { renderNoteContent, renderProfile } from "./html.ts";

test("a post's text becomes escaped note HTML with its links linked", () => {
  assertEquals(
    renderNoteContent(`<script>alert("x")</script> see https://example.com/a?b=1&c=2`),
    `<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; see ` +
      `<a href="https://example.com/a?b=1&amp;c=2">https://example.com/a?b=1&amp;c=2</a></p>`,
  );
});

test("firstLink finds the first http(s) URL of a post", () => {
  assertEquals(firstLink("read http://a.example/x and https://b.example/"), "http://a.example/x");
  assertEquals(firstLink("no link, ftp://c.example/"), undefined);
});

test("the profile page shows remote notes as text, never as HTML", async () => {
  const response = renderProfile({
    name: "alice",
    handle: "@alice@example.com",
    posts: [],
    followers: [{ id: "https://x.example/u/1", inbox: "https://x.example/i", handle: "@<b>@x" }],
    following: [],
    received: [{
      id: "https://x.example/n/1",
      from: "https://x.example/u/1",
      content: `<p>Hi <img src=x onerror="alert(1)"></p>`,
      visibility: "public",
      receivedAt: "2026-01-01T00:00:00.000Z",
    }],
    postUrl: () => "",
  });
  const html = await response.text();
  assertMatch(html, /<p>Hi <\/p>/);
  assertEquals(html.includes("onerror"), false);
  assertMatch(html, /@&lt;b&gt;@x/);
});
