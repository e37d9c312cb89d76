import { assertEquals, test } from "@fedify/fixture";
import { resolveQueueOptions } from "./options.ts";

test("SqliteMessageQueue's prefetch grows to 1,024 by default, or stays at a larger prefetch", () => {
  const path = "/tmp/fedwork-options.sqlite";
  const defaults = resolveQueueOptions({ path });
  assertEquals([defaults.prefetch, defaults.maxPrefetch], [16, 1_024]);
  assertEquals(resolveQueueOptions({ path, prefetch: 2_000 }).maxPrefetch, 2_000);
  assertEquals(resolveQueueOptions({ path, prefetch: 16, maxPrefetch: 16 }).maxPrefetch, 16);
});
