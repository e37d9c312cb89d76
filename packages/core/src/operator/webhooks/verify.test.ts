import { assert, assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { signWebhookRequest, toHex } from "./signature.ts";
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

/**
 * Sends `request`'s headers with another body stream, as a peer that does
 * not stop (or does not send what it declared) would.
 */
function withBodyStream(request: Request, body: ReadableStream<Uint8Array>): Request {
  return new Request(request.url, {
    method: "POST",
    headers: request.headers,
    body,
    duplex: "half",
  } as RequestInit);
}

const CHUNK_BYTES = 64 * 1024;

/**
 * A body that enqueues 64 KiB chunks for ever, only when read (no chunk is
 * pulled ahead), and counts them.
 */
function endlessBody(): {
  stream: ReadableStream<Uint8Array>;
  readonly pulled: number;
  cancelled: Promise<void>;
} {
  const cancelled = deferred();
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(CHUNK_BYTES).fill(0x20));
    },
    cancel() {
      cancelled.resolve();
    },
  }, { highWaterMark: 0 });
  return {
    stream,
    get pulled() {
      return pulled;
    },
    cancelled: cancelled.promise,
  };
}

test("verifyWebhookRequest returns the payload of a request signed with the secret", async () => {
  const request = await signedRequest();
  assertEquals(request.headers.get("Fedwork-Webhook-Event"), "completed");
  assert(/^v2=[0-9a-f]{64}$/.test(request.headers.get("Fedwork-Webhook-Signature") ?? ""));
  const verified = await verifyWebhookRequest(request, { secret });
  assertEquals(verified, payload);
  // The event type the receiver acts on is the signed header's.
  assertEquals(verified.type, "completed");
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

test("verifyWebhookRequest refuses a signed request whose event header was changed", async () => {
  // A captured request replayed as another event type, with its body as is.
  const request = await signedRequest();
  const headers = new Headers(request.headers);
  headers.set("Fedwork-Webhook-Event", "failed");
  const replayed = new Request(request.url, {
    method: "POST",
    headers,
    body: await request.text(),
  });
  const error = await assertRejects(
    () => verifyWebhookRequest(replayed, { secret }),
    WebhookVerificationError,
  );
  assertEquals(error.reason, "invalid-signature");
  // Without the header it is refused too: the signature needs it.
  headers.delete("Fedwork-Webhook-Event");
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

test("verifyWebhookRequest refuses a body whose type differs from the signed event header", async () => {
  const body = JSON.stringify(payload);
  const headers = await signWebhookRequest({
    secret,
    eventId: payload.id,
    eventType: "failed",
    body,
  });
  const error = await assertRejects(
    () =>
      verifyWebhookRequest(
        new Request("https://receiver.example/hooks", { method: "POST", headers, body }),
        { secret },
      ),
    WebhookVerificationError,
  );
  assertEquals(error.reason, "invalid-body");
});

test("verifyWebhookRequest refuses a v1 signature, which did not cover the id and event type", async () => {
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const v1 = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${timestamp}.${body}`)),
  );
  const headers = await signWebhookRequest({
    secret,
    eventId: payload.id,
    eventType: payload.type,
    body,
    timestamp,
  });
  headers.set("Fedwork-Webhook-Signature", `v1=${toHex(v1)}`);
  const error = await assertRejects(
    () =>
      verifyWebhookRequest(
        new Request("https://receiver.example/hooks", { method: "POST", headers, body }),
        { secret },
      ),
    WebhookVerificationError,
  );
  assertEquals(error.reason, "invalid-signature");
});

test("verifyWebhookRequest refuses an id or event header with a dot, and none is signed", async () => {
  const request = await signedRequest();
  for (const [name, value] of [["Fedwork-Webhook-Id", "a.1"], ["Fedwork-Webhook-Event", "a.b"]]) {
    const headers = new Headers(request.headers);
    headers.set(name, value);
    const error = await assertRejects(
      () =>
        verifyWebhookRequest(
          new Request(request.url, { method: "POST", headers, body: JSON.stringify(payload) }),
          { secret },
        ),
      WebhookVerificationError,
    );
    assertEquals(error.reason, "invalid-header");
  }
  await assertRejects(
    () => signWebhookRequest({ secret, eventId: payload.id, eventType: "completed.x", body: "{}" }),
    TypeError,
    "event type",
  );
});

test("verifyWebhookRequest refuses a body past maxBodyBytes on its Content-Length, unread", async () => {
  const request = await signedRequest();
  const maxBodyBytes = 4 * CHUNK_BYTES;
  // An honest peer declaring 5 chunks, whose body is never pulled.
  const body = endlessBody();
  const headers = new Headers(request.headers);
  headers.set("Content-Length", String(5 * CHUNK_BYTES));
  const error = await assertRejects(
    () =>
      verifyWebhookRequest(
        withBodyStream(new Request(request.url, { method: "POST", headers }), body.stream),
        { secret, maxBodyBytes },
      ),
    WebhookVerificationError,
  );
  assertEquals(error.reason, "body-too-large");
  assert(error.message.includes("maxBodyBytes"));
  await within(body.cancelled, "the refused body stream to be cancelled");
  assertEquals(body.pulled, 0);
});

test("verifyWebhookRequest stops reading an endless body at maxBodyBytes and cancels it", async () => {
  const request = await signedRequest();
  const maxBodyBytes = 3 * CHUNK_BYTES + 1;
  const body = endlessBody();
  assertEquals(request.headers.get("Content-Length"), null);
  const error = await within(
    assertRejects(
      () => verifyWebhookRequest(withBodyStream(request, body.stream), { secret, maxBodyBytes }),
      WebhookVerificationError,
    ),
    "verifyWebhookRequest to refuse the endless body",
  );
  assertEquals(error.reason, "body-too-large");
  await within(body.cancelled, "the endless body stream to be cancelled");
  // At most the limit and the one chunk that passed it were read.
  assert(
    body.pulled * CHUNK_BYTES <= maxBodyBytes + CHUNK_BYTES,
    `${body.pulled} chunks of ${CHUNK_BYTES} bytes were read for a limit of ${maxBodyBytes}`,
  );
});

test("verifyWebhookRequest accepts a body of exactly maxBodyBytes", async () => {
  const length = new TextEncoder().encode(JSON.stringify(payload)).byteLength;
  assertEquals(
    await verifyWebhookRequest(await signedRequest(), { secret, maxBodyBytes: length }),
    payload,
  );
  const error = await assertRejects(
    async () => verifyWebhookRequest(await signedRequest(), { secret, maxBodyBytes: length - 1 }),
    WebhookVerificationError,
  );
  assertEquals(error.reason, "body-too-large");
});

test("verifyWebhookRequest throws a TypeError naming maxBodyBytes when it is invalid", async () => {
  for (const maxBodyBytes of [-1, 1.5, Number.NaN, Infinity, 2 ** 53, "1024"]) {
    const request = await signedRequest();
    await assertRejects(
      () => verifyWebhookRequest(request, { secret, maxBodyBytes: maxBodyBytes as number }),
      TypeError,
      "maxBodyBytes",
    );
    // The body was left alone.
    assertEquals(request.bodyUsed, false);
  }
  // 0 is valid: only an empty body fits.
  const error = await assertRejects(
    async () => verifyWebhookRequest(await signedRequest(), { secret, maxBodyBytes: 0 }),
    WebhookVerificationError,
  );
  assertEquals(error.reason, "body-too-large");
});
