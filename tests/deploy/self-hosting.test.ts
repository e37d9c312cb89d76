// docs/manual/self-hosting.md, done: nginx with the page's configuration
// and TLS in front of the microblog example's web role, two worker roles on
// PostgreSQL started with the page's unit files' command lines, a Fedify
// 2.3 server following a user through the proxy and being followed back,
// and SIGTERM stopping every role within its unit's TimeoutStopSec.
//
// Each runtime (Deno, Node.js, Bun) runs the example's processes and the
// Fedify peer on itself; nginx and openssl are the same binaries for all.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { assert, assertEquals, assertMatch, test, waitUntil, within } from "@fedify/fixture";
import postgres from "postgres";
import { httpsRequest } from "./testdata/https.ts";
import { startNginx } from "./testdata/nginx.ts";
import {
  environmentFile,
  fencedBlocks,
  readSelfHostingPage,
  substitute,
  unitFile,
} from "./testdata/page.ts";
import { MAIN, type Role, startRole } from "./testdata/roles.ts";
import { makeCertificates } from "./testdata/tls.ts";

const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const PEER = join(import.meta.dirname!, "testdata", "fedify-peer.ts");
// Waits on other processes, several hops each, on a loaded machine.
const STEP_MS = 120_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The peer's record of what it received (see testdata/fedify-peer.ts). */
interface PeerState {
  accepted: string[];
  followers: string[];
  notes: { id: string | null; attributedTo: string | null; content: string | null }[];
}

test("the self-hosting page's set-up: nginx with TLS, a web and two worker roles on PostgreSQL, federating with Fedify, each stopping on SIGTERM", async () => {
  const page = await readSelfHostingPage();
  const dir = await mkdtemp(join(tmpdir(), "fedwork-self-hosting-"));
  const name = `deploy_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const roles: Role[] = [];
  let peer: Role | undefined;
  let nginx: AsyncDisposable | undefined;
  try {
    const certs = await makeCertificates(dir);
    const ca = await readFile(certs.caPath, "utf8");
    const [httpsPort, httpPort, webPort] = [await freePort(), await freePort(), await freePort()];
    const origin = `https://127.0.0.1:${httpsPort}`;

    // The page's nginx file, with only its placeholders replaced.
    const sites = fencedBlocks(page, "nginx");
    assertEquals(sites.length, 1, "the page has one nginx configuration");
    const site = substitute(sites[0], [
      ["/etc/letsencrypt/live/example.com/fullchain.pem", certs.certPath],
      ["/etc/letsencrypt/live/example.com/privkey.pem", certs.keyPath],
      ["server 127.0.0.1:8000;", `server 127.0.0.1:${webPort};`],
      ["listen 443 ssl;", `listen 127.0.0.1:${httpsPort} ssl;`],
      ["listen 80;", `listen 127.0.0.1:${httpPort};`],
    ]);
    nginx = await startNginx(site, httpsPort);

    // The roles, with the units' command lines and a fresh name for the
    // tables (the last --name wins).
    const webUnit = unitFile(page, "/etc/systemd/system/microblog-web.service");
    const workerUnit = unitFile(page, "/etc/systemd/system/microblog-worker@.service");
    for (const unit of [webUnit, workerUnit]) assertEquals(unit.killSignal, "SIGTERM");
    const place = (args: string[]) =>
      args.map((arg) =>
        arg === "8000"
          ? String(webPort)
          : arg === "https://example.com"
          ? origin
          : arg === "/var/lib/microblog"
          ? join(dir, "data")
          : arg
      ).concat(["--name", name]);
    // The page's environment file, its address and secret replaced, and
    // the CA the processes trust (as a real one would be, system-wide).
    const pageEnv = environmentFile(page, "/etc/microblog/env");
    assertEquals(Object.keys(pageEnv).sort(), ["API_TOKEN", "POSTGRES_URL", "QUEUE_CONCURRENCY"]);
    const token = `token-${crypto.randomUUID()}`;
    const env = {
      ...pageEnv,
      POSTGRES_URL,
      API_TOKEN: token,
      NODE_EXTRA_CA_CERTS: certs.caPath,
      DENO_CERT: certs.caPath,
    };
    roles.push(await startRole("web", MAIN, place(webUnit.mainArgs), env, /web process for /));
    for (const n of [1, 2]) {
      roles.push(
        await startRole(
          `worker ${n}`,
          MAIN,
          place(workerUnit.mainArgs),
          env,
          /worker process for /,
        ),
      );
    }
    peer = await startRole("Fedify peer", PEER, [], env, /listening http:\/\/\S+\n/);
    const peerOrigin = peer.output().match(/listening (http:\/\/\S+)\n/)![1];
    const bob = `${peerOrigin}/users/bob`;
    const peerState = async (): Promise<PeerState> =>
      await (await fetch(`${peerOrigin}/control/state`)).json();
    const alice = new URL("/users/alice", origin).href;

    // Through nginx: the actor carries the public https URIs.
    const actor = await httpsRequest(alice, {
      ca,
      headers: { Accept: "application/activity+json" },
    });
    assertEquals(actor.status, 200, actor.body);
    const actorJson = JSON.parse(actor.body);
    assertEquals(actorJson.id, alice);
    assertEquals(actorJson.inbox, `${alice}/inbox`);

    // Fedify looks alice up by WebFinger over https and follows her; a
    // worker accepts.
    const handle = `@alice@127.0.0.1:${httpsPort}`;
    const follow = await fetch(
      `${peerOrigin}/control/follow?target=${encodeURIComponent(handle)}`,
      { method: "POST" },
    );
    assertEquals(follow.status, 200, await follow.clone().text());
    assertEquals((await follow.json()).following, alice);
    await waitUntil(async () => (await peerState()).accepted.includes(alice), {
      what: "alice's Accept of bob's Follow at the Fedify peer",
      timeoutMs: STEP_MS,
    });
    const api = (path: string) => new URL(`/api/users/alice${path}`, origin);
    const authorized = { Authorization: `Bearer ${token}` };
    const aliceState = async () =>
      JSON.parse((await httpsRequest(api(""), { ca, headers: authorized })).body);
    assertEquals((await aliceState()).followers.map((f: { id: string }) => f.id), [bob]);

    // Alice posts through the API over https; a worker delivers to bob.
    const content = `Hello from behind nginx ${crypto.randomUUID()}`;
    const posted = await httpsRequest(api("/posts"), {
      ca,
      method: "POST",
      headers: { ...authorized, "Content-Type": "application/json" },
      body: JSON.stringify({ content }),
    });
    assertEquals(posted.status, 201, posted.body);
    await waitUntil(
      async () => (await peerState()).notes.some((note) => note.content?.includes(content)),
      { what: "alice's note at the Fedify peer", timeoutMs: STEP_MS },
    );
    const note = (await peerState()).notes.find((n) => n.content?.includes(content))!;
    assertEquals(note.attributedTo, alice);
    assertEquals(note.id, JSON.parse(posted.body).url);
    assert(note.id!.startsWith(`${origin}/`), note.id!);

    // Alice follows bob back; bob's Accept reaches her inbox through nginx.
    const followBack = await httpsRequest(api("/follow"), {
      ca,
      method: "POST",
      headers: { ...authorized, "Content-Type": "application/json" },
      body: JSON.stringify({ target: bob }),
    });
    assertEquals(followBack.status, 202, followBack.body);
    await waitUntil(async () => (await peerState()).followers.includes(alice), {
      what: "alice among bob's followers",
      timeoutMs: STEP_MS,
    });
    await waitUntil(
      async () =>
        (await aliceState()).following.some((f: { id: string; state: string }) =>
          f.id === bob && f.state === "accepted"
        ),
      { what: "bob's Accept in alice's state", timeoutMs: STEP_MS },
    );

    // client_max_body_size: nginx refuses a body over 1 MiB itself.
    const huge = await httpsRequest(`${alice}/inbox`, {
      ca,
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body: new Uint8Array(2 * 1024 * 1024).fill(0x20),
    });
    assertEquals(huge.status, 413);
    assertMatch(huge.body, /nginx/);
    // The plain-http server redirects to https.
    const redirect = await fetch(`http://127.0.0.1:${httpPort}/users/alice`, {
      redirect: "manual",
    });
    assertEquals(redirect.status, 301);
    assertEquals(redirect.headers.get("location"), "https://127.0.0.1/users/alice");
    await redirect.body?.cancel();

    // Readiness: the web role's port, asked from this machine, reports its
    // engines; the same path through nginx is refused (the proxy's
    // X-Forwarded-For gives it away).
    const ready = await fetch(`http://127.0.0.1:${webPort}/readyz`);
    const report = await ready.json();
    assertEquals(ready.status, 200, JSON.stringify(report));
    assertEquals(report.ready, true);
    assertEquals(report.reasons, []);
    assertEquals(
      report.engines.filter((e: { kind: string }) => e.kind === "queue")
        .map((e: { type: string; status: string }) => [e.type, e.status]),
      [["PostgresMessageQueue", "ok"]],
    );
    const throughProxy = await httpsRequest(new URL("/readyz", origin), { ca });
    assertEquals(throughProxy.status, 403, throughProxy.body);

    // SIGTERM: each role exits by itself, with code 0, within the unit's
    // TimeoutStopSec (systemd's SIGKILL would come after it).
    const [web, ...workers] = roles;
    const stops = [
      { role: web, limitMs: webUnit.timeoutStopMs },
      ...workers.map((role) => ({ role, limitMs: workerUnit.timeoutStopMs })),
    ];
    for (const { role } of stops) role.kill("SIGTERM");
    await Promise.all(stops.map(async ({ role, limitMs }) => {
      const exit = await within(
        role.exited,
        () => `${role.name} to exit after SIGTERM; it printed:\n${role.output()}`,
        limitMs,
      );
      assertEquals(exit, { code: 0, signal: null }, `${role.name}:\n${role.output()}`);
    }));
    peer.kill("SIGTERM");
    await peer.exited;
  } finally {
    for (const role of peer == null ? roles : [...roles, peer]) {
      if (role.running()) {
        role.kill("SIGKILL");
        await role.exited;
      }
    }
    await nginx?.[Symbol.asyncDispose]();
    const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
    await sql.unsafe(`DROP TABLE IF EXISTS microblog_${name}_queue, microblog_${name}_kv`);
    await sql.end();
    await rm(dir, { recursive: true, force: true });
  }
});
