// The HTML forms, called in process: signing in with the API token, the
// three checks every form post passes (its origin, its form token, the
// sign-in), the public origin behind a proxy, and the start-up warning
// without API_TOKEN.  forms-browser.test.ts does the same in Chromium.
import { assert, assertEquals, assertMatch, assertThrows, test, withLogs } from "@fedify/fixture";
import { InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";
import { createMicroblog } from "./federation.ts";
import { type ReceivedNote, Store } from "./store.ts";
import { createFetchHandler } from "./web.ts";

const ORIGIN = new URL("https://microblog.example");
const TOKEN = "the-api-token-0123456789";

/** A microblog with alice, in memory, its handler, and a browser's cookie jar of one cookie. */
async function startApp(apiToken?: string, requestOrigin: URL = ORIGIN) {
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
  const handler = createFetchHandler(app, { apiToken });
  let cookie: string | undefined;
  const fetch = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (cookie != null && !headers.has("Cookie")) headers.set("Cookie", cookie);
    // Behind a proxy that does not rewrite it, a request arrives for
    // another origin than the public one.
    const response = await handler(new Request(new URL(path, requestOrigin), { ...init, headers }));
    const set = response.headers.get("set-cookie");
    if (set != null) cookie = set.split(";")[0];
    return response;
  };
  return {
    app,
    store,
    fetch,
    get cookie() {
      return cookie;
    },
    /** The form token of the page at `path`. */
    async formToken(path: string): Promise<string> {
      const html = await (await fetch(path, { headers: { Accept: "text/html" } })).text();
      const token = html.match(/name="csrf" value="([^"]+)"/)?.[1];
      assert(token != null, `no form on ${path}`);
      return token;
    },
    /** A form post as the app's own page sends it. */
    /** A form post as the app's own page sends it; a `null` header is left out. */
    post(path: string, fields: Record<string, string>, change: Record<string, string | null> = {}) {
      const headers = new Headers({
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: ORIGIN.origin,
        "Sec-Fetch-Site": "same-origin",
      });
      for (const [name, value] of Object.entries(change)) {
        if (value == null) headers.delete(name);
        else headers.set(name, value);
      }
      return fetch(path, { method: "POST", headers, body: new URLSearchParams(fields).toString() });
    },
    async [Symbol.asyncDispose]() {
      await queue[Symbol.asyncDispose]();
    },
  };
}

test("signing in with the API token sets an HttpOnly cookie, and only then do the forms post as the user", async () => {
  await using app = await startApp(TOKEN);
  // Signed out: the profile has no forms, and a post is refused.
  const profile = await (await app.fetch("/users/alice", { headers: { Accept: "text/html" } }))
    .text();
  assertEquals(profile.includes('id="compose"'), false);
  assertMatch(profile, /<a href="\/login">Sign in<\/a>/);
  let csrf = await app.formToken("/login");
  const refused = await app.post("/forms/alice/posts", { csrf, content: "Not signed in" });
  assertEquals(refused.status, 401);
  const wrong = await app.post("/login", { csrf, token: "not-the-token" });
  assertEquals(wrong.status, 401);
  assertMatch(await wrong.text(), /That is not this server&#39;s API token\./);

  const signIn = await app.post("/login", { csrf, token: TOKEN });
  assertEquals(signIn.status, 303);
  assertEquals(signIn.headers.get("location"), "https://microblog.example/");
  const setCookie = signIn.headers.get("set-cookie") ?? "";
  // https: the __Host- prefix, Secure, HttpOnly, Lax.
  assertMatch(
    setCookie,
    /^__Host-microblog-session=[\w-]{43}\.\d+\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800; Secure$/,
  );
  // The sign-in started a new session: the old form token is void.
  const stale = await app.post("/forms/alice/posts", { csrf, content: "Stale token" });
  assertEquals(stale.status, 403);
  csrf = await app.formToken("/users/alice");
  const posted = await app.post("/forms/alice/posts", { csrf, content: "Hello from a form" });
  assertEquals(posted.status, 303);
  assertEquals(
    posted.headers.get("location"),
    "https://microblog.example/users/alice?notice=posted",
  );
  assertEquals((await app.store.listPosts("alice")).map((post) => post.content), [
    "Hello from a form",
  ]);
  const page = await (await app.fetch("/users/alice?notice=posted", {
    headers: { Accept: "text/html" },
  })).text();
  assertMatch(page, /<p id="notice" role="status" class="notice">Posted\.<\/p>/);
  assertMatch(page, /Signed in/);

  const signOut = await app.post("/logout", { csrf });
  assertEquals(signOut.status, 303);
  assertMatch(signOut.headers.get("set-cookie") ?? "", /^__Host-microblog-session=; .*Max-Age=0/);
  const after = await app.post("/forms/alice/posts", { csrf, content: "After sign-out" });
  assertEquals(after.status, 403);
  assertEquals((await app.store.listPosts("alice")).length, 1);
});

test("a form post without the app's Origin, from a sibling site, or without the session's token is refused", async () => {
  for (const apiToken of [undefined, TOKEN]) {
    await using app = await startApp(apiToken);
    // Without API_TOKEN the profile has the forms; the sign-in page has none.
    let csrf = await app.formToken(apiToken == null ? "/users/alice" : "/login");
    if (apiToken != null) {
      await app.post("/login", { csrf, token: apiToken });
      csrf = await app.formToken("/users/alice");
    }
    const forged: [string, Record<string, string>, Record<string, string | null>][] = [
      ["no Origin", { csrf, content: "Forged" }, { Origin: null }],
      ["Origin: null", { csrf, content: "Forged" }, { Origin: "null" }],
      ["a foreign Origin", { csrf, content: "Forged" }, { Origin: "https://evil.example" }],
      ["the http origin", { csrf, content: "Forged" }, { Origin: "http://microblog.example" }],
      ["Sec-Fetch-Site: same-site", { csrf, content: "Forged" }, {
        "Sec-Fetch-Site": "same-site",
      }],
      ["Sec-Fetch-Site: cross-site", { csrf, content: "Forged" }, {
        "Sec-Fetch-Site": "cross-site",
      }],
      ["a text/plain form", { csrf, content: "Forged" }, { "Content-Type": "text/plain" }],
      ["no form token", { content: "Forged" }, {}],
      ["a wrong form token", {
        csrf: (csrf[0] === "x" ? "y" : "x") + csrf.slice(1),
        content: "Forged",
      }, {}],
      ["the token without its session's cookie", { csrf, content: "Forged" }, {
        Cookie: "other=1",
      }],
    ];
    await withLogs(async (records) => {
      for (const [what, fields, headers] of forged) {
        const response = await app.post("/forms/alice/posts", fields, headers);
        assertEquals(response.status, 403, `${what} (token: ${apiToken})`);
      }
      assert(records.some((record) => record.properties.reason === "origin"));
      assert(records.some((record) => record.properties.reason === "sec-fetch-site"));
    });
    assertEquals(await app.store.listPosts("alice"), [], `token: ${apiToken}`);
    // The same form, as the page sends it, goes through.
    assertEquals((await app.post("/forms/alice/posts", { csrf, content: "Real" })).status, 303);
    assertEquals((await app.store.listPosts("alice")).length, 1);
  }
});

test("behind a proxy the form's Origin is checked against the public origin, not the request's", async () => {
  // The proxy forwards https://microblog.example to 127.0.0.1:8000 without
  // rewriting the URL; the browser's Origin is the public one.
  await using app = await startApp(undefined, new URL("http://127.0.0.1:8000"));
  const csrf = await app.formToken("/users/alice");
  const local = await app.post("/forms/alice/posts", { csrf, content: "Local" }, {
    Origin: "http://127.0.0.1:8000",
  });
  assertEquals(local.status, 403);
  const posted = await app.post("/forms/alice/posts", { csrf, content: "Public" });
  assertEquals(posted.status, 303);
  assertEquals(
    posted.headers.get("location"),
    "https://microblog.example/users/alice?notice=posted",
  );
  assertEquals((await app.store.listPosts("alice")).map((post) => post.content), ["Public"]);
});

test("only the signed-in browser sees a user's followers-only and direct notes on the profile page", async () => {
  await using app = await startApp(TOKEN);
  const note = (visibility: ReceivedNote["visibility"], content: string): ReceivedNote => ({
    id: `https://remote.example/notes/${visibility}`,
    from: "https://remote.example/users/bob",
    content: `<p>${content}</p>`,
    visibility,
    receivedAt: new Date().toISOString(),
  });
  await app.store.addReceivedNote("alice", note("public", "A public note"));
  await app.store.addReceivedNote("alice", note("direct", "A direct secret"));
  const page = async () =>
    await (await app.fetch("/users/alice", { headers: { Accept: "text/html" } })).text();
  assertEquals((await page()).includes("secret"), false);
  await app.post("/login", { csrf: await app.formToken("/login"), token: TOKEN });
  const signedIn = await page();
  assertMatch(signedIn, /A direct secret/);
  // Each received note has a Like button posting its id.
  assertMatch(
    signedIn,
    /<input type="hidden" name="object" value="https:\/\/remote\.example\/notes\/direct">/,
  );
});

test("without API_TOKEN the web handler warns once, saying what it means and how to set it", async () => {
  await withLogs(async (records) => {
    await using _app = await startApp();
    const warnings = records.filter((record) =>
      record.level === "warning" && String(record.message.join("")).includes("API_TOKEN")
    );
    assertEquals(warnings.length, 1);
    const text = warnings[0].message.join("");
    assertMatch(
      text,
      /anyone who can reach https:\/\/microblog\.example can post, follow and like/,
    );
    assertMatch(text, /set API_TOKEN to a long random secret/);
    assertMatch(text, /https:\/\/microblog\.example\/login/);
  });
  await withLogs(async (records) => {
    await using _app = await startApp(TOKEN);
    assertEquals(records.filter((record) => record.level === "warning"), []);
  });
});

test("a blank API token is refused when the handler is made, naming the option", async () => {
  await using app = await startApp();
  for (const apiToken of ["", "   "]) {
    assertThrows(
      () => createFetchHandler(app.app, { apiToken }),
      TypeError,
      "The apiToken option (API_TOKEN) must be a non-blank secret",
    );
  }
});
