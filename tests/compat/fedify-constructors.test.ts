// Fedwork's engines constructed the way a Fedify app constructs Fedify's
// (testdata/fedify-constructed.ts): each carries a typed task and delivers
// an activity to a loopback inbox through a Fedwork federation, and leaves
// the client handed to it open.
import { assertEquals, deferred, test, within } from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import { createFederation, generateCryptoKeyPair } from "@fedwork/core";
import { z } from "zod";
import { CONSTRUCTED_ENGINES } from "./testdata/fedify-constructed.ts";
import { startInbox } from "./testdata/inbox.ts";
import { createNamespace } from "./testdata/services.ts";

for (const engine of CONSTRUCTED_ENGINES) {
  test(`Built the Fedify way (${engine.name}), an engine carries a task and an activity`, async () => {
    const inbox = await startInbox();
    const instance = await engine.open(createNamespace());
    const controller = new AbortController();
    let workers: Promise<void> | undefined;
    let closed = false;
    try {
      const federation = createFederation<void>({
        kv: instance.kv,
        queue: instance.queue,
        manuallyStartQueue: true,
        allowPrivateAddress: true,
      });
      const keyPair = await generateCryptoKeyPair();
      federation.setActorDispatcher("/users/{identifier}", () => null)
        .setKeyPairsDispatcher(() => [keyPair]);
      const greeted = deferred<string>();
      const greet = federation.defineTask("greet", {
        schema: z.object({ name: z.string() }),
        handler: (_ctx, { name }) => greeted.resolve(`hello, ${name}`),
      });
      workers = federation.startQueue(undefined, { signal: controller.signal });
      const ctx = federation.createContext(new URL("https://example.com/"), undefined);
      await ctx.enqueueTask(greet, { name: "fedify" });
      const id = new URL(`https://example.com/activities/${crypto.randomUUID()}`);
      await ctx.sendActivity(
        { identifier: "alice" },
        { id: new URL("/users/bob", inbox.url), inboxId: new URL("/inbox", inbox.url) },
        new Create({
          id,
          actor: new URL("https://example.com/users/alice"),
          object: new Note({ content: "Constructed the Fedify way" }),
        }),
      );
      assertEquals(await within(greeted.promise, "the task to run"), "hello, fedify");
      const delivery = await within(inbox.accepted, "the activity to be delivered");
      assertEquals(delivery.path, "/inbox");
      assertEquals((JSON.parse(delivery.body) as { id?: string }).id, id.href);
      controller.abort();
      await within(workers, "the workers to stop");
      // Disposes of the engine and checks that the client is still open.
      closed = true;
      await instance.close();
    } finally {
      controller.abort();
      await within(workers ?? Promise.resolve(), "the workers to stop").catch(() => {});
      if (!closed) await instance.close().catch(() => {});
      await inbox.close();
    }
  });
}
