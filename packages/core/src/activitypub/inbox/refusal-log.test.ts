// Refused inbox requests: one info line per remote host per minute, with
// the reason, the fix and how many were not logged, in a bounded table;
// through a real inbox on loopback and on a clock of the test's own.
import { assert, assertEquals, assertMatch, test, withLogs } from "@fedify/fixture";
import type { LogRecord } from "@logtape/logtape";
import { follow, post, withServers } from "../../federation/testdata/inbox-test-support.ts";
import { createFederation } from "../../federation/federation.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InboxRefusalLog, OTHER_HOSTS } from "./refusal-log.ts";

/** The info lines about refusals among `records`. */
function refusalLines(records: readonly LogRecord[]): LogRecord[] {
  return records.filter((record) =>
    record.level === "info" && record.category.join(".") === "fedwork.federation.inbox" &&
    String(record.rawMessage).startsWith("Refused")
  );
}

function refusal(host: string) {
  return {
    host,
    inbox: "https://app.example/inbox",
    status: 401,
    reason: "invalidSignature" as const,
    message: "The signature does not verify.",
  };
}

test("a refused inbox request is logged at info once per sender host, with the fix", async () => {
  await withLogs(async (records) => {
    await withServers(async (remote, local, aliceKey) => {
      const body = JSON.stringify(follow(remote, local));
      for (let i = 0; i < 3; i++) {
        // The body changed after signing: the digest does not match.
        const tampered = JSON.stringify({ ...follow(remote, local), id: remote.url(`/x/${i}`) });
        const response = await post(local.url("/users/bob/inbox"), body, aliceKey, tampered);
        assertEquals(response.status, 401);
      }
      const lines = refusalLines(records);
      assertEquals(lines.length, 1);
      const { properties } = lines[0];
      assertEquals(properties.host, remote.url("/").host);
      assertEquals(properties.reason, "digestMismatch");
      assertEquals(properties.status, 401);
      assertEquals(properties.inbox, local.url("/users/bob/inbox").href);
      assertMatch(String(properties.fix), /proxy/);
      assertEquals(properties.suppressed, 0);
      assertEquals(local.received.length, 0);
    });
  });
});

test("an unsigned inbox request is logged at info under an unknown host", async () => {
  await withLogs(async (records) => {
    await withServers(async (remote, local) => {
      const response = await post(
        local.url("/users/bob/inbox"),
        JSON.stringify(follow(remote, local)),
        null,
      );
      assertEquals(response.status, 401);
      const lines = refusalLines(records);
      assertEquals(lines.map((line) => [line.properties.host, line.properties.reason]), [
        ["(unknown)", "noSignature"],
      ]);
      assertMatch(String(lines[0].properties.fix), /Signature header/);
    });
  });
});

test("a request the unverified-activity hook answers is not logged as refused", async () => {
  await withLogs(async (records) => {
    const federation = createFederation<void>({ kv: new MemoryKvStore() });
    federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
      .onUnverifiedActivity(() => new Response(null, { status: 202 }));
    const body = JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: "https://gone.example/users/carol#delete",
      type: "Delete",
      actor: "https://gone.example/users/carol",
      object: "https://gone.example/users/carol",
    });
    const response = await federation.fetch(
      new Request("https://app.example/inbox", {
        method: "POST",
        headers: { "Content-Type": "application/activity+json" },
        body,
      }),
      { contextData: undefined },
    );
    assertEquals(response.status, 202);
    assertEquals(refusalLines(records), []);
  });
});

test("InboxRefusalLog logs a host again after a minute with the count it did not log", async () => {
  let now = 0;
  const log = new InboxRefusalLog({ now: () => now });
  await withLogs((records) => {
    log.refused(refusal("a.example"));
    now = 30_000;
    log.refused(refusal("a.example"));
    log.refused(refusal("a.example"));
    log.refused(refusal("b.example"));
    assertEquals(refusalLines(records).map((line) => line.properties.host), [
      "a.example",
      "b.example",
    ]);
    now = 61_000;
    log.refused(refusal("a.example"));
    const lines = refusalLines(records);
    assertEquals(lines.length, 3);
    assertEquals(lines[2].properties.host, "a.example");
    assertEquals(lines[2].properties.suppressed, 2);
    return Promise.resolve();
  });
});

test("InboxRefusalLog writes the count of a host that went quiet when its minute ends", async () => {
  let now = 0;
  const log = new InboxRefusalLog({ now: () => now });
  await withLogs((records) => {
    log.refused(refusal("a.example"));
    log.refused(refusal("a.example"));
    now = 60_000;
    log.refused(refusal("b.example"));
    const lines = refusalLines(records);
    assertEquals(lines.map((line) => line.properties.host), [
      "a.example",
      "a.example",
      "b.example",
    ]);
    assertEquals(lines[1].properties.suppressed, 1);
    assertEquals(log.size, 1);
    return Promise.resolve();
  });
});

test("InboxRefusalLog keeps a bounded table: past it, new hosts share one line", async () => {
  const log = new InboxRefusalLog({ maxHosts: 3, now: () => 0 });
  await withLogs((records) => {
    for (let i = 0; i < 1000; i++) log.refused(refusal(`h${i}.example`));
    assert(log.size <= 4, `${log.size} hosts tracked`);
    assertEquals(refusalLines(records).map((line) => line.properties.host), [
      "h0.example",
      "h1.example",
      "h2.example",
      OTHER_HOSTS,
    ]);
    return Promise.resolve();
  });
});
