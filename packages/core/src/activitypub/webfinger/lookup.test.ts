import { assertEquals, assertRejects, startTestServer, test } from "@fedify/fixture";
import { UnknownOptionError } from "../../options/known-options.ts";
import { PrivateAddressError } from "../network/errors.ts";
import { lookupWebFinger } from "./lookup.ts";

test("lookupWebFinger() follows the handle host's redirect to the web host, as Fedify does", async () => {
  const web = await startTestServer((request) => {
    const resource = new URL(request.url).searchParams.get("resource");
    return new Response(
      JSON.stringify({
        subject: resource,
        links: [{ rel: "self", type: "application/activity+json", href: "https://ap.example/u/a" }],
      }),
      { headers: { "Content-Type": "application/jrd+json" } },
    );
  });
  const handleHost = await startTestServer((request) => {
    const url = new URL(request.url);
    return new Response(null, {
      status: 301,
      headers: { Location: new URL(url.pathname + url.search, web.url).href },
    });
  });
  try {
    const resource = `acct:alice@${handleHost.url.host}`;
    const jrd = await lookupWebFinger(new URL(resource), { allowPrivateAddress: true });
    assertEquals(jrd?.subject, resource);
    assertEquals(jrd?.links?.[0].href, "https://ap.example/u/a");
    assertEquals(web.requests.length, 1);
    // With redirects turned off, the redirect is a failed lookup.
    assertEquals(
      await lookupWebFinger(resource, { allowPrivateAddress: true, maxRedirects: 0 }),
      null,
    );
  } finally {
    await handleHost.close();
    await web.close();
  }
});

test("lookupWebFinger() refuses a loopback host without allowPrivateAddress, its default", async () => {
  const server = await startTestServer(() => new Response("{}"));
  try {
    await assertRejects(
      () => lookupWebFinger(`acct:alice@${server.url.host}`),
      PrivateAddressError,
    );
    assertEquals(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test("lookupWebFinger() refuses Fedify's maxRedirection, pointing to maxRedirects", async () => {
  await assertRejects(
    // @ts-expect-error: Fedify's name of the option
    () => lookupWebFinger("acct:alice@example.com", { maxRedirection: 3 }),
    UnknownOptionError,
    "maxRedirects",
  );
});
