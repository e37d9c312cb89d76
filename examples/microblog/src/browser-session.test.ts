// The session cookie on its own: what signs a browser in and what does not.
import { assert, assertEquals, assertMatch, test } from "@fedify/fixture";
import { BrowserSessions } from "./browser-session.ts";

const TOKEN = "the-api-token-0123456789";
const ORIGIN = new URL("http://127.0.0.1:8001");

const withCookie = (name: string, value: string) =>
  new Request(new URL("/", ORIGIN), { headers: { Cookie: `other=1; ${name}=${value}` } });

function base64url(bytes: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A sign-in cookie value made as the server makes one, for any origin and expiry. */
async function signedValue(origin: URL, expires: number): Promise<string> {
  const nonce = "n".repeat(43);
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(TOKEN),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`${origin.origin}\n${nonce}\n${expires}`),
  );
  return `${nonce}.${expires}.${base64url(mac)}`;
}

const cookieValue = (setCookie: string) => setCookie.split(";")[0].split("=").slice(1).join("=");

test("a sign-in cookie signs its browser in, with a form token that outlives reloads", async () => {
  const sessions = new BrowserSessions(ORIGIN, TOKEN);
  assertEquals(sessions.cookieName, "microblog-session-8001");
  const setCookie = await sessions.signIn();
  assertMatch(
    setCookie,
    /^microblog-session-8001=.+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
  );
  const request = () => withCookie(sessions.cookieName, cookieValue(setCookie));
  const first = await sessions.read(request());
  const second = await sessions.read(request());
  assertEquals([first.signedIn, first.setCookie], [true, undefined]);
  assertEquals(first.formToken, second.formToken);
  // Another server of the same host, another port: a cookie of its own.
  assertEquals(
    new BrowserSessions(new URL("http://127.0.0.1:8002"), TOKEN).cookieName,
    "microblog-session-8002",
  );
  assertEquals(
    new BrowserSessions(new URL("https://blog.example"), TOKEN).cookieName,
    "__Host-microblog-session",
  );
});

test("a tampered, expired, foreign or unsigned cookie signs nobody in and starts a fresh session", async () => {
  const sessions = new BrowserSessions(ORIGIN, TOKEN);
  const now = Math.floor(Date.now() / 1000);
  const good = await signedValue(ORIGIN, now + 3600);
  assertEquals((await sessions.read(withCookie(sessions.cookieName, good))).signedIn, true);
  const [nonce, expires, mac] = good.split(".");
  const bad: [string, string][] = [
    ["a later expiry", `${nonce}.${Number(expires) + 1}.${mac}`],
    ["another nonce", `${"m".repeat(43)}.${expires}.${mac}`],
    ["a cut MAC", `${nonce}.${expires}.${mac.slice(1)}`],
    ["no MAC", `${nonce}.${expires}.`],
    ["an expired sign-in", await signedValue(ORIGIN, now - 1)],
    ["another origin's sign-in", await signedValue(new URL("http://127.0.0.1:8002"), now + 3600)],
    ["a short nonce", "abc"],
  ];
  for (const [what, value] of bad) {
    const session = await sessions.read(withCookie(sessions.cookieName, value));
    assertEquals(session.signedIn, false, what);
    assert(session.setCookie != null, `${what}: a fresh session`);
  }
  // Without an API token nothing is signed in, whatever the cookie says.
  const open = new BrowserSessions(ORIGIN, undefined);
  assertEquals((await open.read(withCookie(open.cookieName, good))).signedIn, false);
  // And signing out forgets the cookie.
  assertMatch(sessions.signOut(), /^microblog-session-8001=; .*Max-Age=0$/);
});
