// The inbox against hostile peers: every request is cheap to refuse and
// cannot poison anyone else's.  Real federations on loopback, real
// signatures; see inbox-test-support.ts.
import {
  assert,
  assertEquals,
  assertThrows,
  startTestServer,
  test,
  withLogs,
} from "@fedify/fixture";
import {
  type InnerList,
  type Item,
  parseDictionary,
  serializeDictionary,
} from "structured-headers";
import { signRequest } from "../signatures/sign.ts";
import type { HttpSignatureSpec } from "../signatures/spec.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import { FederationOptionError } from "../../federation/errors.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { createFederation } from "../../federation/federation.ts";
import {
  follow,
  type InboxServer,
  post,
  startServer,
  withServers,
} from "../../federation/testdata/inbox-test-support.ts";
import { testKeyPair } from "../../federation/testdata/test-support.ts";

const { privateKey } = await testKeyPair();

/** Signs a POST of `body` to `inbox` as `keyId`, in `spec`. */
function signedPost(
  inbox: URL,
  body: string,
  keyId: URL,
  spec: HttpSignatureSpec = "rfc9421",
): Promise<Request> {
  const request = new Request(inbox, {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body,
  });
  return signRequest(request, privateKey, keyId, { spec });
}

/** Answers a request with `federation.fetch()`, or says what it threw. */
async function statusOf(server: InboxServer, request: Request): Promise<number | string> {
  try {
    const response = await server.federation.fetch(request, { contextData: undefined });
    await response.body?.cancel();
    return response.status;
  } catch (error) {
    return `threw ${error instanceof Error ? error.name : typeof error}`;
  }
}

test("a request carrying 100 signatures causes at most three key fetches and answers 401", async () => {
  const keyServer = await startTestServer(() => new Response("Not found", { status: 404 }));
  const local = await startServer();
  try {
    const keyOf = (i: number) => new URL(`/users/u${i}#main-key`, keyServer.url).href;
    const activity = { ...follow(local, local), actor: new URL("/users/u0", keyServer.url).href };
    const signed = await signedPost(
      local.url("/users/bob/inbox"),
      JSON.stringify(activity),
      new URL(keyOf(0)),
    );
    const [[components, parameters]] = parseDictionary(signed.headers.get("signature-input")!)
      .values() as Iterable<InnerList>;
    const [signature] = parseDictionary(signed.headers.get("signature")!).get("sig1") as Item;
    const inputs = new Map<string, InnerList>();
    const signatures = new Map<string, Item>();
    for (let i = 0; i < 100; i++) {
      inputs.set(`sig${i}`, [components, new Map(parameters).set("keyid", keyOf(i))]);
      signatures.set(`sig${i}`, [signature, new Map()]);
    }
    const request = new Request(signed);
    request.headers.set("Signature-Input", serializeDictionary(inputs));
    request.headers.set("Signature", serializeDictionary(signatures));
    // Through fetch(), not HTTP: 100 signatures pass the servers' header limits.
    const records = await withLogs(async (records) => {
      assertEquals(await statusOf(local, request), 401);
      return records;
    });
    const fetched = keyServer.requests.map((recorded) => new URL(recorded.url).pathname);
    assertEquals(fetched, ["/users/u0", "/users/u1", "/users/u2"]);
    // Refused once, in one info line naming the first key, with no error
    // objects (stacks).
    const loud = records.filter((record) => record.level !== "debug" && record.level !== "trace");
    assertEquals(loud.map((record) => [record.level, record.properties.reason]), [
      ["info", "keyNotFound"],
    ]);
    assert(
      records.every((record) =>
        Object.values(record.properties).every((value) => !(value instanceof Error))
      ),
      "no error objects logged",
    );
    const refusals = records.filter((record) =>
      record.category.join(".") === "fedwork.activitypub.inbox"
    );
    assertEquals(refusals.map((record) => record.properties.reason), ["keyNotFound"]);
  } finally {
    await keyServer.close();
    await local.server.close();
  }
});

test("malformed signatures and headers answer 400 or 401, never 500", async () => {
  const remote = await startServer();
  const local = await startServer();
  try {
    const inbox = local.url("/users/bob/inbox");
    const keyId = remote.url("/users/alice#main-key");
    const body = JSON.stringify(follow(remote, local, "/follows/malformed"));
    const cavage = await signedPost(inbox, body, keyId, "draft-cavage-http-signatures-12");
    const rfc = await signedPost(inbox, body, keyId);
    const edited = (signed: Request, name: string, edit: (value: string | null) => string) => {
      const headers = new Headers(signed.headers);
      headers.set(name, edit(signed.headers.get(name)));
      return new Request(inbox, { method: "POST", headers, body });
    };
    const cavageHeaders = (headers: string, extra = "") =>
      edited(
        cavage,
        "Signature",
        (value) => value!.replace(/headers="[^"]*"/, `headers="${headers}"${extra}`),
      );
    const rfcInput = (edit: (value: string) => string) =>
      edited(rfc, "Signature-Input", (value) => edit(value!));
    const cases: Record<string, Request> = {
      "cavage (foo)": cavageHeaders("(request-target) host date digest (foo)"),
      "cavage bad name": cavageHeaders("(request-target) host date digest a@b"),
      "cavage created=soon": cavageHeaders(
        "(request-target) host (created) digest",
        ',created="x"',
      ),
      "cavage created absurd": cavageHeaders(
        "(request-target) host (created) digest",
        ",created=99999999999999999999999",
      ),
      "cavage expires=never": cavageHeaders("(request-target) host date digest", ',expires="x"'),
      "cavage keyId not a URL": edited(cavage, "Signature", (v) => v!.replace(keyId.href, "k")),
      "cavage keyId javascript:": edited(
        cavage,
        "Signature",
        (value) => value!.replace(keyId.href, "javascript:alert(1)"),
      ),
      "cavage garbage base64": edited(
        cavage,
        "Signature",
        (value) => value!.replace(/signature="[^"]*"/, 'signature="@@@"'),
      ),
      "cavage twice": edited(cavage, "Signature", (value) => `${value}, ${value}`),
      "cavage garbage": edited(cavage, "Signature", () => "\u00ff\u00fe,,=="),
      "Authorization garbage": edited(
        new Request(inbox, { method: "POST", body }),
        "Authorization",
        () => "Signature ,,,",
      ),
      "malformed Host": edited(cavage, "Host", () => "exa mple:99999"),
      "garbage Digest": edited(cavage, "Digest", () => "SHA-256=!!!,=,"),
      'rfc9421 "(foo)"': rfcInput((value) => value.replace('"date"', '"date" "(foo)"')),
      'rfc9421 "bad name"': rfcInput((value) => value.replace('"date"', '"date" "bad name"')),
      'rfc9421 "DATE"': rfcInput((value) => value.replace('"date"', '"DATE"')),
      "rfc9421 unknown @component": rfcInput((value) => value.replace('"date"', '"@nope"')),
      "rfc9421 created not a number": rfcInput((value) =>
        value.replace(/created=\d+/, "created=a")
      ),
      "rfc9421 created absurd": rfcInput((value) =>
        value.replace(/created=\d+/, "created=999999999999999")
      ),
      "rfc9421 expires a string": rfcInput((value) => `${value};expires="never"`),
      "rfc9421 keyid not a URL": rfcInput((value) => value.replace(keyId.href, "k")),
      "rfc9421 unparsable input": rfcInput(() => "sig1=(((;;"),
      "rfc9421 garbage base64": edited(rfc, "Signature", () => "sig1=:!!!:"),
      "rfc9421 garbage Content-Digest": edited(rfc, "Content-Digest", () => "sha-256=:%%:"),
    };
    const statuses: Record<string, number | string> = {};
    for (const [name, request] of Object.entries(cases)) {
      statuses[name] = await statusOf(local, request);
    }
    const unexpected = Object.entries(statuses).filter(([, status]) =>
      status !== 400 && status !== 401
    );
    assertEquals(unexpected, []);
    assertEquals(local.received, []);
  } finally {
    await remote.server.close();
    await local.server.close();
  }
});

test("a request refused before any key is fetched never calls the shared key dispatcher", async () => {
  const remote = await startServer();
  const local = await startServer({ sharedKey: "instance", inboxMaxBytes: 1024 });
  try {
    const inbox = local.url("/users/bob/inbox");
    const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
    const body = JSON.stringify(follow(remote, local, "/follows/lazy"));
    const statuses = [
      (await post(inbox, body, null)).status,
      (await post(
        inbox,
        JSON.stringify({ ...follow(remote, local), pad: "x".repeat(2048) }),
        aliceKey,
      ))
        .status,
      (await post(inbox, body, aliceKey, body.replace("Follow", "Block"))).status,
    ];
    assertEquals([statuses, local.sharedKeyCalls], [[401, 413, 401], 0]);
    assertEquals((await post(inbox, body, aliceKey)).status, 202);
    assertEquals(local.sharedKeyCalls, 1);
  } finally {
    await remote.server.close();
    await local.server.close();
  }
});

for (const skipSignatureVerification of [false, true]) {
  test(
    `an activity id first sent by another origin still reaches the listener from its own ` +
      `actor${skipSignatureVerification ? " (skipSignatureVerification: by actor origin)" : ""}`,
    async () => {
      const victim = await startServer();
      const attacker = await startServer();
      const local = await startServer({ skipSignatureVerification });
      try {
        const genuine = follow(victim, local, "/follows/predictable");
        const decoy = { ...genuine, actor: attacker.url("/users/mallory").href };
        const sign = (server: InboxServer, actor: string) =>
          skipSignatureVerification
            ? null
            : { keyId: server.url(`/users/${actor}#main-key`), privateKey };
        const inbox = local.url("/users/bob/inbox");
        const statuses = [
          (await post(inbox, JSON.stringify(decoy), sign(attacker, "mallory"))).status,
          (await post(inbox, JSON.stringify(genuine), sign(victim, "alice"))).status,
          // The genuine one again: a duplicate of its own sender's.
          (await post(inbox, JSON.stringify(genuine), sign(victim, "alice"))).status,
        ];
        assertEquals(statuses, [202, 202, 202]);
        assertEquals(
          local.received.map(({ activity }) => [activity.id?.href, activity.actorId?.href]),
          [
            [genuine.id, decoy.actor],
            [genuine.id, genuine.actor],
          ],
        );
      } finally {
        await victim.server.close();
        await attacker.server.close();
        await local.server.close();
      }
    },
  );
}

test("an activity without an id is deduplicated by its body's SHA-256 digest", async () => {
  const remote = await startServer();
  const local = await startServer();
  try {
    const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
    const { id: _, ...anonymous } = follow(remote, local);
    const inbox = local.url("/users/bob/inbox");
    const other = JSON.stringify({ ...anonymous, object: local.url("/users/carol").href });
    const statuses = [
      (await post(inbox, JSON.stringify(anonymous), aliceKey)).status,
      (await post(inbox, JSON.stringify(anonymous), aliceKey)).status,
      (await post(inbox, other, aliceKey)).status,
    ];
    assertEquals(statuses, [202, 202, 202]);
    assertEquals(local.received.map(({ activity }) => activity.objectId?.href), [
      local.url("/users/bob").href,
      local.url("/users/carol").href,
    ]);
  } finally {
    await remote.server.close();
    await local.server.close();
  }
});

/**
 * An inbox queue that encodes each message as JSON, the way the durable
 * backends do (and wraps the encoder's error as they do), keeping what it
 * decoded; or, with `failWith`, whose encoder always throws that.
 */
class EncodingQueue implements MessageQueue {
  readonly stored: unknown[] = [];
  readonly failWith?: Error;

  constructor(failWith?: Error) {
    this.failWith = failWith;
  }

  enqueue(message: unknown): Promise<void> {
    let text: string;
    try {
      if (this.failWith != null) throw this.failWith;
      text = JSON.stringify(message);
    } catch (error) {
      return Promise.reject(
        new TypeError(`The message cannot be encoded as JSON: ${error}`, { cause: error }),
      );
    }
    this.stored.push(JSON.parse(text));
    return Promise.resolve();
  }

  listen(_handler: unknown, options: { signal?: AbortSignal } = {}): Promise<void> {
    return new Promise((resolve) => options.signal?.addEventListener("abort", () => resolve()));
  }
}

/** A Create whose note's content nests `levels` objects deep, as JSON text. */
function deepCreate(remote: InboxServer, id: string, levels: number): string {
  const create = {
    "@context": "https://www.w3.org/ns/activitystreams",
    id: remote.url(id).href,
    type: "Create",
    actor: remote.url("/users/alice").href,
    object: { id: remote.url(`${id}/note`).href, type: "Note", content: "DEEP" },
  };
  const deep = '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
  return JSON.stringify(create).replace('"DEEP"', deep);
}

for (const skipSignatureVerification of [false, true]) {
  test(
    "an activity nested 10,000 levels deep answers 400 and is never enqueued" +
      (skipSignatureVerification ? " (skipSignatureVerification)" : ""),
    async () => {
      const remote = await startServer();
      const queue = new EncodingQueue();
      const local = await startServer({ queue, skipSignatureVerification });
      try {
        const aliceKey = skipSignatureVerification
          ? null
          : { keyId: remote.url("/users/alice#main-key"), privateKey };
        const inbox = local.url("/users/bob/inbox");
        const deep = await post(inbox, deepCreate(remote, "/creates/deep", 10_000), aliceKey);
        assertEquals(deep.status, 400);
        const shallow = await post(inbox, deepCreate(remote, "/creates/shallow", 3), aliceKey);
        assertEquals(shallow.status, 202);
        assertEquals(queue.stored.length, 1);
      } finally {
        await remote.server.close();
        await local.server.close();
      }
    },
  );
}

test("an activity the inbox queue cannot encode answers 400 each time, not 500", async () => {
  const remote = await startServer();
  const queue = new EncodingQueue(new RangeError("Maximum call stack size exceeded"));
  const local = await startServer({ queue });
  try {
    const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
    const inbox = local.url("/users/bob/inbox");
    const body = deepCreate(remote, "/creates/unencodable", 3);
    const statuses = [
      (await post(inbox, body, aliceKey)).status,
      // Its id was released: not "already received".
      (await post(inbox, body, aliceKey)).status,
    ];
    assertEquals(statuses, [400, 400]);
  } finally {
    await remote.server.close();
    await local.server.close();
  }
});

test("the inboxMaxBytes option is checked when the federation is created", () => {
  for (const value of [0, -1, 1.5, Number.NaN, "1024"]) {
    const error = assertThrows(
      () => createFederation({ kv: new MemoryKvStore(), inboxMaxBytes: value as number }),
      FederationOptionError,
    );
    assertEquals(error.option, "inboxMaxBytes");
  }
  assertThrows(
    () => createFederation({ kv: new MemoryKvStore(), inboxMaxByte: 512 } as never),
    UnknownOptionError,
    "did you mean inboxMaxBytes?",
  );
});

for (const skipSignatureVerification of [false, true]) {
  const mode = skipSignatureVerification ? "skipSignatureVerification" : "verified";
  test(`a body over inboxMaxBytes answers 413 (${mode})`, async () => {
    const remote = await startServer();
    const local = await startServer({ inboxMaxBytes: 512, skipSignatureVerification });
    try {
      const aliceKey = skipSignatureVerification
        ? null
        : { keyId: remote.url("/users/alice#main-key"), privateKey };
      const inbox = local.url("/users/bob/inbox");
      const small = follow(remote, local, "/follows/small");
      const large = { ...follow(remote, local, "/follows/large"), summary: "x".repeat(512) };
      const statuses = [
        (await post(inbox, JSON.stringify(large), aliceKey)).status,
        (await post(inbox, JSON.stringify(small), aliceKey)).status,
      ];
      assertEquals(statuses, [413, 202]);
    } finally {
      await remote.server.close();
      await local.server.close();
    }
  });

  test(`a streamed body without Content-Length is read no further than inboxMaxBytes (${mode})`, async () => {
    const local = await startServer({ inboxMaxBytes: 1024, skipSignatureVerification });
    try {
      let delivered = 0;
      let chunks = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          // 256 KiB in all, unless the reader stops.
          if (chunks++ >= 1024) return controller.close();
          delivered += 256;
          controller.enqueue(new Uint8Array(256).fill(0x20));
        },
      }, { highWaterMark: 0 });
      const request = new Request(local.url("/users/bob/inbox"), {
        method: "POST",
        // Any signature header makes the body worth reading.
        headers: { Signature: 'keyId="https://example.com/key",signature="AAAA"' },
        body,
        duplex: "half",
      } as RequestInit);
      assert(!request.headers.has("content-length"));
      assertEquals(await statusOf(local, request), 413);
      assert(delivered <= 1024 + 2 * 256, `${delivered} bytes were read`);
    } finally {
      await local.server.close();
    }
  });
}

test("an inline @context cannot make listeners see another actor than the signer", async () => {
  await withServers(async (remote, local, aliceKey) => {
    const victim = remote.url("/users/carol").href;
    // As plain JSON the actor is alice, who signs; read as JSON-LD, the
    // inline context drops `actor` and makes `x` the actor: carol.
    const activity = {
      "@context": ["https://www.w3.org/ns/activitystreams", { actor: null, x: "as:actor" }],
      id: remote.url("/follows/rebound").href,
      type: "Follow",
      actor: remote.url("/users/alice").href,
      x: victim,
      object: local.url("/users/bob").href,
    };
    const response = await post(local.url("/users/bob/inbox"), JSON.stringify(activity), aliceKey);
    assertEquals(response.status, 400);
    assertEquals(local.received.length, 0);
    // The same activity without the trick is accepted.
    const plain = { ...follow(remote, local, "/follows/plain") };
    const accepted = await post(local.url("/users/bob/inbox"), JSON.stringify(plain), aliceKey);
    assertEquals(accepted.status, 202);
    assertEquals(local.received.map((r) => r.activity.actorId?.href), [
      remote.url("/users/alice").href,
    ]);
  });
});
