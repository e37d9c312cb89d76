// Loads @fedwork/core in Cloudflare's workerd (the `workerd` npm package
// ships the runtime) and asks it for WebFinger and an actor over HTTP.
// The Worker is bundled with `deno bundle`, as a Worker would be deployed.
// `nodejs_compat` is on because @fedify/vocab, which core depends on,
// imports node: modules when it loads; core itself reaches none
// (scripts/check-core-load.ts checks that).
import { assertEquals, test } from "@fedify/fixture";
import {
  bundleWorker,
  freeLoopbackPort,
  WORKSPACE_ROOT,
  workspaceBinary,
} from "@fedify/fixture/workerd";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Starting workerd and bundling can be slow on a busy machine; this only
// bounds how long a broken setup takes to fail.
const START_TIMEOUT_MS = 60_000;

const CONFIG = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = ["nodejs_compat"],
);
`;

test("@fedwork/core loads in workerd and serves WebFinger and an actor", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fedwork-workerd-"));
  try {
    await bundleWorker(
      join(WORKSPACE_ROOT, "tests", "workerd", "src", "testdata", "worker.ts"),
      join(dir, "worker.js"),
    );
    await writeFile(join(dir, "config.capnp"), CONFIG);
    const port = await freeLoopbackPort();
    const origin = `http://127.0.0.1:${port}`;
    const workerd = spawn(
      workspaceBinary("workerd"),
      ["serve", join(dir, "config.capnp"), `--socket-addr=http=127.0.0.1:${port}`],
      { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    workerd.stdout!.setEncoding("utf8").on("data", (chunk: string) => output += chunk);
    workerd.stderr!.setEncoding("utf8").on("data", (chunk: string) => output += chunk);
    const exited = new Promise<void>((done) => workerd.on("exit", () => done()));
    try {
      const webfinger = `${origin}/.well-known/webfinger?resource=acct:alice@127.0.0.1:${port}`;
      let response: Response | undefined;
      const deadline = Date.now() + START_TIMEOUT_MS;
      while (response == null) {
        if (workerd.exitCode !== null) throw new Error(`workerd exited:\n${output}`);
        try {
          response = await fetch(webfinger);
        } catch {
          if (Date.now() > deadline) {
            throw new Error(`workerd did not answer within a minute:\n${output}`);
          }
          await new Promise((wait) => setTimeout(wait, 200));
        }
      }
      assertEquals(response.status, 200, output);
      assertEquals(await response.json(), {
        subject: `acct:alice@127.0.0.1:${port}`,
        aliases: [`${origin}/users/alice`],
        links: [{ rel: "self", type: "application/activity+json", href: `${origin}/users/alice` }],
      });
      const actor = await fetch(`${origin}/users/alice`, {
        headers: { accept: "application/activity+json" },
      });
      assertEquals(actor.status, 200);
      const body = await actor.json() as { id: string; preferredUsername: string };
      assertEquals([body.id, body.preferredUsername], [`${origin}/users/alice`, "alice"]);
      assertEquals(
        (await fetch(`${origin}/users/bob`, {
          headers: { accept: "application/activity+json" },
        })).status,
        404,
      );
    } finally {
      workerd.kill("SIGTERM");
      await exited;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
