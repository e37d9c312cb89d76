import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { signWebhookRequest } from "./signature.ts";
import type { WebhookPayload } from "./types.ts";
import { verifyWebhookRequest, WebhookVerificationError } from "./verify.ts";

const secret = "a-test-secret-of-enough-length";
const payload: WebhookPayload = {
  id: "7d3e1a52-0c7e-4f43-9a4e-1f0b7c2f7a11",
  type: "completed",
  createdAt: "2026-01-01T00:00:00.000Z",
  webhookId: "hook-1",
  task: { id: "task-1", name: "resize", attempt: 0, enqueuedAt: "2026-01-01T00:00:00.000Z" },
};

async function signedRequest(
  options: { body?: string; timestamp?: number; secret?: string } = {},
): Promise<Request> {
  const body = JSON.stringify(payload);
  const headers = await signWebhookRequest({
    secret: options.secret ?? secret,
    eventId: payload.id,
    eventType: payload.type,
    body,
    timestamp: options.timestamp,
  });
  return new Request("https://receiver.example/hooks", {
    method: "POST",
    headers,
    body: options.body ?? body,
  });
}

test("verifyWebhookRequest returns the payload of a request signed with the secret", async () => {
  assertEquals(await verifyWebhookRequest(await signedRequest(), { secret }), payload);
  // During a rotation, either secret is accepted.
  assertEquals(
    await verifyWebhookRequest(await signedRequest(), {
      secret: ["another-secret-of-enough-length", secret],
    }),
    payload,
  );
});

test("verifyWebhookRequest rejects a tampered body, a wrong secret and a missing header", async () => {
  const tampered = await signedRequest({
    body: JSON.stringify({ ...payload, type: "failed" }),
  });
  const error = await assertRejects(
    () => verifyWebhookRequest(tampered, { secret }),
    WebhookVerificationError,
  );
  assertEquals(error.reason, "invalid-signature");
  const wrong = await assertRejects(
    async () =>
      verifyWebhookRequest(await signedRequest({ secret: "not-the-right-secret-at-all" }), {
        secret,
      }),
    WebhookVerificationError,
  );
  assertEquals(wrong.reason, "invalid-signature");
  const request = await signedRequest();
  const headers = new Headers(request.headers);
  headers.delete("Fedwork-Webhook-Signature");
  const missing = await assertRejects(
    () =>
      verifyWebhookRequest(
        new Request(request.url, { method: "POST", headers, body: JSON.stringify(payload) }),
        { secret },
      ),
    WebhookVerificationError,
  );
  assertEquals(missing.reason, "missing-header");
});

test("verifyWebhookRequest rejects old (replayed) and future timestamps", async () => {
  const now = Math.floor(Date.now() / 1000);
  const old = await assertRejects(
    async () =>
      verifyWebhookRequest(await signedRequest({ timestamp: now - 301 }), {
        secret,
        toleranceSeconds: 300,
      }),
    WebhookVerificationError,
  );
  assertEquals(old.reason, "timestamp-too-old");
  const future = await assertRejects(
    async () => verifyWebhookRequest(await signedRequest({ timestamp: now + 3600 }), { secret }),
    WebhookVerificationError,
  );
  assertEquals(future.reason, "timestamp-in-future");
  // Within the tolerance it passes.
  assertEquals(
    await verifyWebhookRequest(await signedRequest({ timestamp: now - 100 }), { secret }),
    payload,
  );
});

test("verifyWebhookRequest refuses a short secret without echoing it", async () => {
  const error = await assertRejects(
    async () => verifyWebhookRequest(await signedRequest(), { secret: "short-one" }),
    TypeError,
  );
  assertEquals(error.message.includes("short-one"), false);
});
