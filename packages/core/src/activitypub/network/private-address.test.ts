import { assertEquals, test } from "@fedify/fixture";
import { isNonPublicAddress } from "./private-address.ts";

test("isNonPublicAddress() recognizes loopback, private and link-local addresses", () => {
  const nonPublic = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "::1",
    "::",
    "fd00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "not an address",
  ];
  const publicOnes = ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111"];
  assertEquals(nonPublic.filter((address) => !isNonPublicAddress(address)), []);
  assertEquals(publicOnes.filter((address) => isNonPublicAddress(address)), []);
});
