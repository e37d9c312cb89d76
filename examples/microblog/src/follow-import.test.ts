// The follow import end to end: two servers on loopback with their SQLite
// queues; alice imports a list through the JSON API, her import-follows
// task follows each account in a recorded step and waits durably for each
// Accept; and the list's parser.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assert, assertEquals, assertThrows, test, waitUntil } from "@fedify/fixture";
import type { TaskStatus } from "@fedwork/core";
import { type FollowImportResult, MAX_IMPORTED_FOLLOWS, parseImportList } from "./follow-import.ts";
import { startInstance } from "./instance.ts";
import { call, readState, type ScenarioUser } from "./scenario.ts";

test("import-follows follows every account of a list and waits for their Accepts", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "fedwork-microblog-import-"));
  try {
    const common = { pollIntervalMs: 50, welcomeDelay: { hours: 1 } };
    await using alice = await startInstance({
      ...common,
      name: "alice",
      dataDir: join(dataDir, "alice"),
      users: ["alice"],
    });
    await using remote = await startInstance({
      ...common,
      name: "remote",
      dataDir: join(dataDir, "remote"),
      users: ["bob", "carol"],
    });
    const host = remote.url.host;
    const aliceApi: ScenarioUser = { origin: alice.url, name: "alice" };
    const answer = await call(aliceApi, "import-follows", {
      accounts: `Account address,Show boosts\n@bob@${host},true\n\n@carol@${host},true\n` +
        `@nobody@${host},true\n@bob@${host},true\n`,
    }) as { importing: string };
    assert(typeof answer.importing === "string", JSON.stringify(answer));
    let status: TaskStatus | undefined;
    await waitUntil(async () => {
      status = await alice.app.federation.getTaskStatus(answer.importing);
      return status?.state === "completed" || status?.state === "failed";
    }, { what: () => `the import to end; last ${JSON.stringify(status)}`, timeoutMs: 60_000 });
    assertEquals(status?.state, "completed");
    const bob = new URL("/users/bob", remote.url).href;
    const carol = new URL("/users/carol", remote.url).href;
    assertEquals(status?.result as FollowImportResult, {
      accepted: [bob, carol],
      pending: [],
      unknown: [`@nobody@${host}`],
    });
    // Each account was followed once, though the task ran again after each
    // wait; the app's Accept listener marked both accepted.
    const state = await readState(aliceApi);
    assertEquals(
      state.following.map((f) => [f.id, f.state]).sort(),
      [[bob, "accepted"], [carol, "accepted"]],
    );
    for (const name of ["bob", "carol"]) {
      const followers = (await readState({ origin: remote.url, name })).followers;
      assertEquals(followers.map((f) => f.id), [new URL("/users/alice", alice.url).href]);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("an import list is one account a line, CSV's first column, without duplicates, and bounded", () => {
  assertEquals(
    parseImportList("# mine\n@a@x.example\r\nhttps://y.example/u/b, true\n@a@x.example"),
    [
      "@a@x.example",
      "https://y.example/u/b",
    ],
  );
  assertThrows(() => parseImportList("\n# nothing\n"), RangeError, "from 1 to 100");
  const many = Array.from({ length: MAX_IMPORTED_FOLLOWS + 1 }, (_, i) => `@u${i}@x.example`);
  assertThrows(() => parseImportList(many.join("\n")), RangeError, "got 101");
});
