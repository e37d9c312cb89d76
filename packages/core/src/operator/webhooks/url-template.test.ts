// Webhook URL templates: refused at addWebhook() when a placeholder is
// unknown or misplaced, and filled in per request, each value URL-encoded,
// as a real receiver on loopback sees the requests.
import {
  assertEquals,
  assertMatch,
  assertRejects,
  assertThrows,
  startTestServer,
  test,
  waitUntil,
} from "@fedify/fixture";
import { z } from "zod";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { createFederation } from "../../federation/federation.ts";
import { withWorkers } from "../../federation/testdata/test-support.ts";
import { WEBHOOK_ID_HEADER } from "./signature.ts";
import type { WebhookPayload } from "./types.ts";
import { expandWebhookUrl } from "./url-template.ts";

const secret = "webhook-test-secret-0123456789";

function federationOn(queue: InProcessMessageQueue) {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    taskRetryPolicy: () => null,
  });
}

test("addWebhook refuses an unknown URL placeholder, naming it and the known ones", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  // The URL, as a string and as a URL object (whose path has the
  // braces percent-encoded).
  for (
    const url of [
      "https://x.example/api/jobs/{job_id}/webhook",
      new URL("https://x.example/api/jobs/{job_id}/webhook"),
    ]
  ) {
    await assertRejects(
      () => federation.addWebhook({ url, events: ["completed"], secret }),
      TypeError,
      "unknown placeholder {job_id}; the placeholders are {taskId}, {taskName}, {attempt}, " +
        "{event}, {eventId}, {webhookId}",
    );
  }
  await assertRejects(
    () =>
      federation.addWebhook({ url: "https://x.example/?id={TaskId}", events: ["failed"], secret }),
    TypeError,
    "{TaskId}",
  );
  for (const url of ["https://{taskName}.hooks.example/", "https://hooks.example/#{taskId}"]) {
    await assertRejects(
      () => federation.addWebhook({ url, events: ["failed"], secret }),
      TypeError,
      "placeholders may stand in the path and the query only",
    );
  }
  assertEquals(await federation.listWebhooks(), []);
});

test("a webhook URL template is filled in per request with the event's values, each URL-encoded", async () => {
  await using receiver = await startTestServer(() => new Response(null, { status: 204 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const job = federation.defineTask("reports:weekly digest", {
    schema: z.object({ fail: z.boolean() }),
    handler: (_ctx, { fail }) => {
      if (fail) throw new Error("no data");
    },
  });
  const template = new URL(
    "/jobs/{taskId}/{event}?task={taskName}&attempt={attempt}&hook={webhookId}&event={eventId}",
    receiver.url,
  ).href;
  const webhook = await federation.addWebhook({
    url: template,
    events: ["completed", "failed"],
    secret,
  });
  // Listed as given, braces and all.
  assertEquals(
    webhook.url,
    `${
      new URL(receiver.url).origin
    }/jobs/{taskId}/{event}?task={taskName}&attempt={attempt}&hook={webhookId}&event={eventId}`,
  );
  assertEquals((await federation.listWebhooks()).map((listed) => listed.url), [webhook.url]);
  const ids: string[] = [];
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    for (const fail of [false, true]) {
      const { messageId } = await ctx.enqueueTask(job, { fail }) as { messageId: string };
      ids.push(messageId);
    }
    await waitUntil(() => receiver.requests.length === 2, { what: "two webhook requests" });
  });
  const seen = receiver.requests.map((request) => {
    const url = new URL(request.url);
    const payload = JSON.parse(request.body) as WebhookPayload;
    return {
      path: url.pathname,
      search: url.search,
      // Each value is the one in the request's own body and headers.
      eventIdMatches: request.headers.get(WEBHOOK_ID_HEADER) === payload.id &&
        url.searchParams.get("event") === payload.id &&
        url.searchParams.get("attempt") === String(payload.task.attempt),
    };
  }).sort((a, b) => a.path.localeCompare(b.path));
  const expected = [`/jobs/${ids[0]}/completed`, `/jobs/${ids[1]}/failed`].sort();
  assertEquals(
    seen.map(({ path, eventIdMatches }) => ({ path, eventIdMatches })),
    expected.map((path) => ({ path, eventIdMatches: true })),
  );
  for (const { search } of seen) {
    // The space and the colon are encoded: the name is one query value.
    assertEquals(
      search.replace(/&attempt=\d+/, "").replace(/&event=[^&]*$/, ""),
      `?task=reports%3Aweekly%20digest&hook=${webhook.id}`,
    );
  }
});

test("a filled-in value cannot change the URL's shape: slashes, ? and # stay inside their component", () => {
  const url = expandWebhookUrl("https://hooks.example/jobs/{taskName}/done?event={event}", {
    taskId: "",
    taskName: "../admin?x=1#y",
    attempt: "1",
    event: "a&b=c",
    eventId: "",
    webhookId: "",
  });
  assertEquals(url.pathname, "/jobs/..%2Fadmin%3Fx%3D1%23y/done");
  assertEquals([...url.searchParams], [["event", "a&b=c"]]);
  assertEquals(url.hash, "");
});

test("a value of . or .. in the path is refused rather than sent to another path", () => {
  const values = { taskId: "", taskName: "", attempt: "1", event: "e", eventId: "", webhookId: "" };
  for (const taskName of [".", ".."]) {
    assertThrows(
      () => expandWebhookUrl("https://hooks.example/jobs/{taskName}/done", { ...values, taskName }),
      TypeError,
      `{taskName} is "${taskName}", which would change its path`,
    );
    // In the query it is only a value.
    assertEquals(
      expandWebhookUrl("https://hooks.example/jobs?task={taskName}", { ...values, taskName }).href,
      `https://hooks.example/jobs?task=${taskName}`,
    );
  }
});

test("a request whose value would change the URL's path fails for good, unsent", async () => {
  await using receiver = await startTestServer(() => new Response(null, { status: 204 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const job = federation.defineTask("..", { schema: z.object({}), handler: () => {} });
  await federation.addWebhook({
    url: new URL("/jobs/{taskName}/done", receiver.url).href,
    events: ["completed"],
    secret,
  });
  await withWorkers(federation, async () => {
    await federation.createContext(new URL("https://example.com/"), undefined).enqueueTask(job, {});
    await waitUntil(async () => (await federation.listFailedTasks()).records.length === 1, {
      what: "the webhook task to fail for good",
    });
  });
  const [record] = (await federation.listFailedTasks()).records;
  assertEquals([record.taskName, record.reason], ["fedwork:webhook", "permanent"]);
  assertMatch(record.error?.message ?? "", /\{taskName\} is "\.\.", which would change its path/);
  assertEquals(receiver.requests.length, 0);
});

test("a URL stored before templates, with an encoded brace, is still sent literally", () => {
  const values = {
    taskId: "1",
    taskName: "t",
    attempt: "1",
    event: "e",
    eventId: "",
    webhookId: "",
  };
  assertEquals(
    expandWebhookUrl("https://hooks.example/jobs/%7BtaskId%7D", values).href,
    "https://hooks.example/jobs/%7BtaskId%7D",
  );
});
