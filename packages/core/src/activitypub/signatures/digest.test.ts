import { assertEquals, test } from "@fedify/fixture";
import {
  checkContentDigestHeader,
  checkDigestHeader,
  contentDigestHeaderOf,
  createContentDigestHeader,
  createDigestHeader,
} from "./digest.ts";
import { serializeDictionary } from "structured-headers";

const body = new TextEncoder().encode('{"hello":"world"}');
// printf '{"hello":"world"}' | openssl dgst -sha256 -binary | base64
const sha256 = "k6I5cakU5erL8KjSUVTNownDwccvu5kU1Hxg88toFYg=";

test("createDigestHeader() and createContentDigestHeader() encode SHA-256 as each scheme expects", async () => {
  assertEquals(await createDigestHeader(body), `SHA-256=${sha256}`);
  assertEquals(await createContentDigestHeader(body), `sha-256=:${sha256}:`);
});

test("contentDigestHeaderOf() writes what the RFC 8941 serializer writes", async () => {
  // Digests whose Base64 has "+", "/" and padding, and one of all zeros.
  const digests = [new Uint8Array(32), new Uint8Array(32).fill(0xff)];
  for (let i = 0; i < 6; i++) {
    const bytes = new TextEncoder().encode(`body ${i}`);
    digests.push(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
  }
  for (const digest of digests) {
    assertEquals(
      contentDigestHeaderOf(digest),
      serializeDictionary(new Map([["sha-256", [digest, new Map()]]])),
    );
    assertEquals(await checkContentDigestHeader(contentDigestHeaderOf(digest), body), "mismatch");
  }
});

test("checkDigestHeader() accepts a matching digest in any case and rejects a wrong one", async () => {
  assertEquals(await checkDigestHeader(`SHA-256=${sha256}`, body), "match");
  assertEquals(await checkDigestHeader(`sha-256=${sha256}, MD5=abc=`, body), "match");
  assertEquals(await checkDigestHeader(`SHA-256=${sha256}`, new Uint8Array([1])), "mismatch");
  assertEquals(await checkDigestHeader("MD5=abc=", body), "unsupported");
  assertEquals(await checkDigestHeader("garbage", body), "malformed");
});

test("checkContentDigestHeader() checks every supported digest of the dictionary", async () => {
  assertEquals(await checkContentDigestHeader(`sha-256=:${sha256}:`, body), "match");
  assertEquals(await checkContentDigestHeader(`md5=:AAAA:, sha-256=:${sha256}:`, body), "match");
  assertEquals(
    await checkContentDigestHeader(`sha-256=:${sha256}:`, new Uint8Array([1])),
    "mismatch",
  );
  assertEquals(await checkContentDigestHeader("md5=:AAAA:", body), "unsupported");
  assertEquals(await checkContentDigestHeader("sha-256=oops", body), "malformed");
});
