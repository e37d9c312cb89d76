import { assertEquals, test } from "@fedify/fixture";
import { acceptsJsonLd } from "./negotiation.ts";
import { createActivityJsonResponse, createNotAcceptableResponse } from "./responses.ts";

function accepts(accept: string | null): boolean {
  return acceptsJsonLd(
    new Request("https://example.com/users/alice", {
      headers: accept == null ? {} : { Accept: accept },
    }),
  );
}

test("acceptsJsonLd() accepts the ActivityPub media types", () => {
  assertEquals(accepts("application/activity+json"), true);
  assertEquals(accepts("application/activity+json, application/ld+json"), true);
  assertEquals(
    accepts('application/ld+json; profile="https://www.w3.org/ns/activitystreams"'),
    true,
  );
  assertEquals(accepts("application/ld+json"), true);
  assertEquals(accepts("application/json"), true);
  assertEquals(accepts("Application/Activity+JSON"), true);
});

test("acceptsJsonLd() refuses browsers, wildcards, other profiles and a missing header", () => {
  assertEquals(
    accepts("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    false,
  );
  assertEquals(accepts("*/*"), false);
  assertEquals(accepts(null), false);
  assertEquals(accepts('application/ld+json; profile="https://example.com/other"'), false);
  assertEquals(accepts("application/activity+json;q=0"), false);
  assertEquals(accepts("text/html, application/activity+json"), false);
  assertEquals(accepts("application/activity+json, text/html"), true);
  assertEquals(accepts("text/html;q=0.5, application/json"), true);
});

test("the response helpers set the ActivityPub content type and Vary: Accept", async () => {
  const response = createActivityJsonResponse({ id: "x" }, { status: 201 });
  assertEquals(response.status, 201);
  assertEquals(response.headers.get("content-type"), "application/activity+json");
  assertEquals(response.headers.get("vary"), "Accept");
  assertEquals(await response.json(), { id: "x" });
  const refused = createNotAcceptableResponse();
  assertEquals([refused.status, refused.headers.get("vary")], [406, "Accept"]);
});
