// The options of the federation's request and sending entry points, and of
// the in-process building blocks, are checked like every other: a
// misspelt or foreign option throws an UnknownOptionError naming it and
// suggesting the nearest known name.
import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { createFetchDocumentLoader } from "../activitypub/network/document-loader.ts";
import { fetchRemote } from "../activitypub/network/outgoing-http.ts";
import type { SendActivityOptions } from "../activitypub/outbox/send-options.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { InProcessMessageQueueOptions } from "../queue/in-process-message-queue.ts";
import type { FederationFetchOptions } from "./api.ts";
import { createFederation } from "./federation.ts";
import { RecordingQueue, registerTestActor } from "./testdata/test-support.ts";

test("new InProcessMessageQueue() refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () =>
      new InProcessMessageQueue(
        { redeliveryDelya: { seconds: 1 } } as InProcessMessageQueueOptions,
      ),
    UnknownOptionError,
  );
  assertEquals(error.option, "redeliveryDelya");
  assertEquals(
    error.message,
    "Unknown option redeliveryDelya of new InProcessMessageQueue(); did you mean " +
      "redeliveryDelay? The options are redeliveryDelay.",
  );
  // Fedify's queue polls; this one does not, and says so by refusing it.
  assertThrows(
    () =>
      new InProcessMessageQueue({ pollInterval: { seconds: 5 } } as InProcessMessageQueueOptions),
    UnknownOptionError,
    "Unknown option pollInterval of new InProcessMessageQueue()",
  );
});

test("new MemoryKvStore() refuses any option, since it takes none", () => {
  const error = assertThrows(
    // @ts-expect-error: the store takes no options.
    () => new MemoryKvStore({ ttl: { minutes: 5 } }),
    UnknownOptionError,
  );
  assertEquals(error.option, "ttl");
  assertEquals(error.message, "Unknown option ttl of new MemoryKvStore(). It takes no options.");
  new MemoryKvStore();
});

test("fetchRemote() refuses an unknown option before any request", async () => {
  // A rejected promise, not an exception thrown by the call itself.
  const pending = fetchRemote(
    "http://127.0.0.1:9/",
    {
      userAgent: "test",
      allowPrivateAddress: true,
      timout: { seconds: 1 },
    } as Parameters<typeof fetchRemote>[1],
  );
  const error = await assertRejects(() => pending, UnknownOptionError);
  assertEquals(error.option, "timout");
  assertEquals(
    error.message.split("?")[0],
    "Unknown option timout of fetchRemote(); did you mean timeout",
  );
});

test("createFetchDocumentLoader() refuses an unknown option when it is created", () => {
  const error = assertThrows(
    () =>
      createFetchDocumentLoader(
        {
          userAgent: "test",
          allowPrivateAddress: false,
          maxRedirect: 2,
        } as Parameters<typeof createFetchDocumentLoader>[0],
      ),
    UnknownOptionError,
  );
  assertEquals(error.option, "maxRedirect");
  assertEquals(
    error.message.split("?")[0],
    "Unknown option maxRedirect of createFetchDocumentLoader(); did you mean maxRedirects",
  );
});

function setUp() {
  const queue = new RecordingQueue({ deliver: false });
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  registerTestActor(federation);
  const ctx = federation.createContext(new URL("https://local.example/"), undefined);
  return { queue, federation, ctx };
}

test("sendActivity() refuses an unknown option, suggesting the nearest name, and sends nothing", async () => {
  const { queue, ctx } = setUp();
  const recipient = {
    id: new URL("https://remote.example/users/bob"),
    inboxId: new URL("https://remote.example/users/bob/inbox"),
  };
  const follow = new Follow({
    id: new URL("https://local.example/follows/1"),
    actor: new URL("https://local.example/users/alice"),
    object: recipient.id,
  });
  const error = await assertRejects(
    () =>
      ctx.sendActivity(
        { identifier: "alice" },
        recipient,
        follow,
        { preferSharedInbx: true } as SendActivityOptions,
      ),
    UnknownOptionError,
  );
  assertEquals(error.option, "preferSharedInbx");
  assertEquals(
    error.message,
    "Unknown option preferSharedInbx of sendActivity(); did you mean preferSharedInbox? " +
      "The options are fanout, orderingKey, preferSharedInbox, syncCollection.",
  );
  // Fedify's immediate option has no effect here: refused, not ignored.
  await assertRejects(
    () =>
      ctx.sendActivity(
        { identifier: "alice" },
        recipient,
        follow,
        { immediate: true } as SendActivityOptions,
      ),
    UnknownOptionError,
    "Unknown option immediate of sendActivity()",
  );
  assertEquals(queue.enqueued.length, 0);
});

test("fetch() refuses an unknown option, suggesting the nearest name", async () => {
  const { federation } = setUp();
  const error = await assertRejects(
    () =>
      federation.fetch(new Request("https://local.example/users/alice"), {
        contextData: undefined,
        onNotFund: () => new Response(null, { status: 404 }),
      } as FederationFetchOptions<void>),
    UnknownOptionError,
  );
  assertEquals(error.option, "onNotFund");
  assertEquals(
    error.message.split("?")[0],
    "Unknown option onNotFund of fetch(); did you mean onNotFound",
  );
});
