import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { PrivateAddressError } from "./errors.ts";
import {
  assertPublicUrl,
  isNonPublicAddress,
  normalizeIpAddress,
  resolvePublicAddresses,
} from "./private-address.ts";

const NON_PUBLIC = true;
const PUBLIC = false;

// Each row: an address as a caller may spell it, and whether it is non-public.
const VERDICTS: readonly (readonly [string, boolean])[] = [
  // IPv4 ranges, with the public neighbours of their edges.
  ["0.0.0.0", NON_PUBLIC],
  ["0.1.2.3", NON_PUBLIC],
  ["10.0.0.1", NON_PUBLIC],
  ["10.255.255.255", NON_PUBLIC],
  ["100.64.0.1", NON_PUBLIC],
  ["100.127.255.254", NON_PUBLIC],
  ["100.63.255.255", PUBLIC],
  ["100.128.0.1", PUBLIC],
  ["127.0.0.1", NON_PUBLIC],
  ["127.255.255.254", NON_PUBLIC],
  ["169.254.169.254", NON_PUBLIC],
  ["169.255.0.1", PUBLIC],
  ["172.16.0.1", NON_PUBLIC],
  ["172.31.255.255", NON_PUBLIC],
  ["172.15.255.255", PUBLIC],
  ["172.32.0.1", PUBLIC],
  ["192.0.0.8", NON_PUBLIC],
  ["192.0.2.1", NON_PUBLIC],
  ["192.0.43.10", PUBLIC],
  ["192.88.99.1", NON_PUBLIC],
  ["192.168.1.1", NON_PUBLIC],
  ["198.18.0.1", NON_PUBLIC],
  ["198.19.255.255", NON_PUBLIC],
  ["198.20.0.1", PUBLIC],
  ["198.51.100.7", NON_PUBLIC],
  ["203.0.113.9", NON_PUBLIC],
  ["224.0.0.1", NON_PUBLIC],
  ["239.255.255.250", NON_PUBLIC],
  ["240.0.0.1", NON_PUBLIC],
  ["255.255.255.255", NON_PUBLIC],
  ["8.8.8.8", PUBLIC],
  ["1.1.1.1", PUBLIC],
  ["93.184.216.34", PUBLIC],
  // IPv4 as an integer, in octal or hex, shortened.
  ["2130706433", NON_PUBLIC],
  ["0x7f000001", NON_PUBLIC],
  ["0X7F000001", NON_PUBLIC],
  ["0177.0.0.1", NON_PUBLIC],
  ["0177.0000.0000.0001", NON_PUBLIC],
  ["127.1", NON_PUBLIC],
  ["127.0.1", NON_PUBLIC],
  ["0x7f.1", NON_PUBLIC],
  ["0", NON_PUBLIC],
  ["0xa9fea9fe", NON_PUBLIC],
  ["2852039166", NON_PUBLIC],
  ["0xc0.0xa8.1.1", NON_PUBLIC],
  ["167772161", NON_PUBLIC],
  ["127.0.0.1.", NON_PUBLIC],
  ["134744072", PUBLIC],
  ["0x08080808", PUBLIC],
  ["010.010.010.010", PUBLIC], // octal 8.8.8.8, not 10.10.10.10
  // Not IPv4 at all.
  ["256.0.0.1", NON_PUBLIC],
  ["1.2.3.4.5", NON_PUBLIC],
  ["08.8.8.8", NON_PUBLIC],
  ["example.com", NON_PUBLIC],
  ["not an address", NON_PUBLIC],
  ["", NON_PUBLIC],
  // IPv6 ranges.
  ["::", NON_PUBLIC],
  ["::1", NON_PUBLIC],
  ["0:0:0:0:0:0:0:1", NON_PUBLIC],
  ["[::1]", NON_PUBLIC],
  ["fc00::1", NON_PUBLIC],
  ["fd12:3456:789a::1", NON_PUBLIC],
  ["fe80::1", NON_PUBLIC],
  ["fe80::1%eth0", NON_PUBLIC],
  ["[fe80::1%25eth0]", NON_PUBLIC],
  ["febf::1", NON_PUBLIC],
  ["fec0::1", NON_PUBLIC],
  ["FEFF::1", NON_PUBLIC],
  ["ff02::1", NON_PUBLIC],
  ["FF05::1:3", NON_PUBLIC],
  ["100::1", NON_PUBLIC],
  ["100::ffff:ffff:ffff:ffff", NON_PUBLIC],
  ["2001:db8::1", NON_PUBLIC],
  ["2001:DB8:85A3::8A2E:370:7334", NON_PUBLIC],
  ["2001::1", NON_PUBLIC],
  ["2001:2::1", NON_PUBLIC],
  ["2001:10::1", NON_PUBLIC],
  ["2001:1ff::1", NON_PUBLIC],
  ["2001:200::1", PUBLIC],
  ["3fff::1", NON_PUBLIC],
  ["3fff:fff:ffff::1", NON_PUBLIC],
  ["5f00::1", NON_PUBLIC],
  ["4000::1", NON_PUBLIC],
  ["2606:4700::1111", PUBLIC],
  ["2a00:1450:4001::200e", PUBLIC],
  ["[2A00:1450:4001::200E]", PUBLIC],
  ["2404:6800:4003:c00::64", PUBLIC],
  // IPv4-mapped, dotted and as the URL parser writes it.
  ["::ffff:127.0.0.1", NON_PUBLIC],
  ["::ffff:7f00:1", NON_PUBLIC],
  ["::FFFF:7F00:1", NON_PUBLIC],
  ["[::ffff:7f00:1]", NON_PUBLIC],
  ["0:0:0:0:0:ffff:127.0.0.1", NON_PUBLIC],
  ["0000:0000:0000:0000:0000:ffff:7f00:0001", NON_PUBLIC],
  ["::ffff:169.254.169.254", NON_PUBLIC],
  ["::ffff:a9fe:a9fe", NON_PUBLIC],
  ["::ffff:10.0.0.1", NON_PUBLIC],
  ["::ffff:a00:1", NON_PUBLIC],
  ["::ffff:192.168.1.1", NON_PUBLIC],
  ["::ffff:c0a8:101", NON_PUBLIC],
  ["::ffff:0:0", NON_PUBLIC],
  ["::ffff:8.8.8.8", PUBLIC],
  ["::ffff:808:808", PUBLIC],
  ["::ffff:0808:0808", PUBLIC],
  // IPv4-compatible and IPv4-translated: refused whatever they embed.
  ["::7f00:1", NON_PUBLIC],
  ["::127.0.0.1", NON_PUBLIC],
  ["::a9fe:a9fe", NON_PUBLIC],
  ["::8.8.8.8", NON_PUBLIC],
  ["::ffff:0:7f00:1", NON_PUBLIC],
  ["::ffff:0:808:808", NON_PUBLIC],
  // NAT64: judged by the embedded IPv4; the local-use prefix is refused.
  ["64:ff9b::7f00:1", NON_PUBLIC],
  ["64:ff9b::127.0.0.1", NON_PUBLIC],
  ["64:ff9b::a9fe:a9fe", NON_PUBLIC],
  ["64:ff9b::c0a8:101", NON_PUBLIC],
  ["64:ff9b::808:808", PUBLIC],
  ["64:ff9b::8.8.8.8", PUBLIC],
  ["64:ff9b:1::808:808", NON_PUBLIC],
  // 6to4: judged by the IPv4 in groups 1 and 2.
  ["2002:7f00:1::", NON_PUBLIC],
  ["2002:7f00:0001::1", NON_PUBLIC],
  ["2002:a9fe:a9fe::1", NON_PUBLIC],
  ["2002:a00:1::1", NON_PUBLIC],
  ["2002:c0a8:101::1", NON_PUBLIC],
  ["2002:0808:0808::1", PUBLIC],
  // Teredo: refused, here with the client 127.0.0.1 (inverted bits).
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", NON_PUBLIC],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", NON_PUBLIC],
  // Not IPv6 at all.
  [":::", NON_PUBLIC],
  ["1::2::3", NON_PUBLIC],
  ["2606:4700::1111::", NON_PUBLIC],
  ["12345::", NON_PUBLIC],
  ["g::1", NON_PUBLIC],
  ["2606:4700:0:0:0:0:0:1111:1", NON_PUBLIC],
  ["2606:4700:0:0:0:0:0:1111::", NON_PUBLIC],
  ["::ffff:127.1", NON_PUBLIC],
  ["::ffff:127.000.0.1", NON_PUBLIC],
  ["2606:4700::1111%", NON_PUBLIC],
];

test("isNonPublicAddress() judges every spelling of every special-purpose range", () => {
  const wrong = VERDICTS
    .filter(([address, nonPublic]) => isNonPublicAddress(address) !== nonPublic)
    .map(([address, nonPublic]) => `${address} (expected ${nonPublic ? "non-public" : "public"})`);
  assertEquals(wrong, []);
});

test("normalizeIpAddress() writes the canonical form of any spelling", () => {
  const cases: readonly (readonly [string, string | null])[] = [
    ["0x7f.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["::FFFF:7F00:1", "::ffff:127.0.0.1"],
    ["[::ffff:a9fe:a9fe]", "::ffff:169.254.169.254"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
    ["2606:4700:0:0:1:0:0:1111", "2606:4700::1:0:0:1111"],
    ["1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"],
    ["fe80::1%eth0", "fe80::1"],
    ["::", "::"],
    ["64:ff9b::8.8.8.8", "64:ff9b::808:808"],
    ["not an address", null],
  ];
  const wrong = cases
    .map(([address, expected]) => [address, expected, normalizeIpAddress(address)])
    .filter(([, expected, actual]) => actual !== expected);
  assertEquals(wrong, []);
});

test("assertPublicUrl() refuses URLs whose host is a non-public address in any spelling", async () => {
  const refused = [
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/latest/meta-data/",
    "http://[::ffff:10.0.0.1]/",
    "http://[64:ff9b::127.0.0.1]/",
    "http://[2002:7f00:1::1]/",
    "http://[::127.0.0.1]/",
    "http://[fec0::1]/",
    "http://0x7f.1/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "https://localhost/",
    "https://foo.localhost/",
  ];
  const passed: string[] = [];
  for (const url of refused) {
    try {
      await assertPublicUrl(new URL(url));
      passed.push(url);
    } catch (error) {
      if (!(error instanceof PrivateAddressError)) passed.push(`${url} (${error})`);
    }
  }
  assertEquals(passed, []);
});

test("assertPublicUrl() lets public IP literals through without a lookup", async () => {
  await assertPublicUrl(new URL("http://8.8.8.8/"));
  await assertPublicUrl(new URL("https://[2606:4700::1111]/"));
  await assertPublicUrl(new URL("https://[::ffff:8.8.8.8]/"));
  await assertRejects(() => assertPublicUrl(new URL("ftp://8.8.8.8/")), TypeError);
});

test("resolvePublicAddresses() passes public IP literals through in canonical form", async () => {
  assertEquals(await resolvePublicAddresses("8.8.8.8"), [{ address: "8.8.8.8", family: 4 }]);
  assertEquals(await resolvePublicAddresses("134744072"), [{ address: "8.8.8.8", family: 4 }]);
  assertEquals(await resolvePublicAddresses("[2606:4700:0::1111]"), [
    { address: "2606:4700::1111", family: 6 },
  ]);
});

test("resolvePublicAddresses() refuses localhost and non-public IP literals", async () => {
  const hosts = [
    "localhost",
    "foo.localhost",
    "LOCALHOST.",
    "127.0.0.1",
    "0x7f.1",
    "[::1]",
    "[::ffff:7f00:1]",
    "::ffff:a9fe:a9fe",
    "[fe80::1%25eth0]",
  ];
  const passed: string[] = [];
  for (const host of hosts) {
    try {
      passed.push(`${host} -> ${JSON.stringify(await resolvePublicAddresses(host))}`);
    } catch (error) {
      if (!(error instanceof PrivateAddressError) || error.url !== host) {
        passed.push(`${host} (${error})`);
      }
    }
  }
  assertEquals(passed, []);
});
