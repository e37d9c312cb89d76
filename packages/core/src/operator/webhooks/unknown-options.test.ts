// addWebhook() refuses a name it does not know, such as the filters of
// other webhook systems or a misspelt header option, rather than store a
// webhook that silently ignores them.
import { assertEquals, assertMatch, assertRejects, test } from "@fedify/fixture";
import { createFederation } from "../../federation/federation.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import type { WebhookInit } from "./types.ts";

test("addWebhook refuses an unknown option, suggesting the nearest name", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  const init = {
    url: "https://hooks.example/fedwork",
    events: ["completed"],
    secret: "webhook-test-secret-0123456789",
  } as const;
  const error = await assertRejects(
    () => federation.addWebhook({ ...init, task: ["send"] } as WebhookInit),
    UnknownOptionError,
  );
  assertEquals(error.option, "task");
  assertMatch(
    error.message,
    /^Unknown option task of addWebhook\(\); did you mean tasks\? The options are deliveries, events, headers, retryPolicy, secret, static, tasks, url\.$/,
  );
  for (const name of ["filters", "header"]) {
    const refused = await assertRejects(
      () => federation.addWebhook({ ...init, [name]: {} } as WebhookInit),
      UnknownOptionError,
    );
    assertEquals(refused.option, name);
  }
  assertEquals(await federation.listWebhooks(), []);
});
