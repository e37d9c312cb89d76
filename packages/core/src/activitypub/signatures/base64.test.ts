import { assertEquals, test } from "@fedify/fixture";
import { decodeBase64Leniently, encodeBase64 } from "./base64.ts";

test("encodeBase64 writes padded standard Base64 that decodes back", () => {
  const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
  const text = encodeBase64(bytes);
  assertEquals(text.endsWith("="), true);
  assertEquals(decodeBase64Leniently(text), bytes);
  assertEquals(encodeBase64(new Uint8Array()), "");
});

test("decodeBase64Leniently reads what Buffer.from(text, 'base64') read", () => {
  const bytes = Uint8Array.from([0xfb, 0xff, 0xbf, 0x00, 0x10]);
  assertEquals(encodeBase64(bytes), "+/+/ABA=");
  // URL-safe alphabet, missing padding, stray characters.
  assertEquals(decodeBase64Leniently("-_-_ABA"), bytes);
  assertEquals(decodeBase64Leniently("+/+/\nAB A="), bytes);
  // Malformed input decodes to something that will not verify, never throws.
  assertEquals(decodeBase64Leniently("!!!"), new Uint8Array());
  assertEquals(decodeBase64Leniently("A"), new Uint8Array());
});

test("encodeBase64 encodes bytes longer than one chunk as Base64 does byte by byte", () => {
  const bytes = Uint8Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 256);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  assertEquals(encodeBase64(bytes), btoa(binary));
  assertEquals(encodeBase64(bytes.subarray(1, 8194)), btoa(binary.slice(1, 8194)));
});
