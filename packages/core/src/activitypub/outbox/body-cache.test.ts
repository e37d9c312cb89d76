import { assert, assertEquals, assertStrictEquals, test } from "@fedify/fixture";
import { contentDigestHeaderOf, digestHeaderOf } from "../signatures/digest.ts";
import { signedBodyOf } from "./body-cache.ts";

// printf '{"hello":"world"}' | openssl dgst -sha256 -binary | base64
const sha256 = "k6I5cakU5erL8KjSUVTNownDwccvu5kU1Hxg88toFYg=";

test("signedBodyOf() shares one body and one digest between deliveries of the same JSON", async () => {
  const json = '{"hello":"world"}';
  const first = signedBodyOf(json);
  // A different string object with the same text, as a fan-out's next
  // message decodes it.
  const second = signedBodyOf(JSON.stringify({ hello: "world" }));
  assertStrictEquals(second, first);
  assertEquals(new TextDecoder().decode(first.bytes), json);
  assertStrictEquals(first.sha256(), second.sha256());
  assertEquals(digestHeaderOf(await first.sha256()), `SHA-256=${sha256}`);
  assertEquals(contentDigestHeaderOf(await first.sha256()), `sha-256=:${sha256}:`);
});

test("signedBodyOf() keeps 16 recent bodies and does not keep a large one", () => {
  const run = crypto.randomUUID();
  const oldest = signedBodyOf(`{"run":"${run}","n":0}`);
  const bodies = [oldest];
  for (let n = 1; n <= 15; n++) bodies.push(signedBodyOf(`{"run":"${run}","n":${n}}`));
  // Using the oldest makes it the most recent; the second oldest goes next.
  assertStrictEquals(signedBodyOf(`{"run":"${run}","n":0}`), oldest);
  signedBodyOf(`{"run":"${run}","n":16}`);
  assertStrictEquals(signedBodyOf(`{"run":"${run}","n":0}`), oldest);
  assert(signedBodyOf(`{"run":"${run}","n":1}`) !== bodies[1], "the least recent was evicted");

  const large = `"${"x".repeat(2 * 1024 * 1024)}"`;
  assert(signedBodyOf(large) !== signedBodyOf(large), "a 2 MiB body is not kept");
});
