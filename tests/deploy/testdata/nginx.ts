// nginx as a test starts it: a foreground process (`daemon off`) with a
// temporary prefix for its pid, logs and temporary files, running a site
// configuration inside a minimal main one, as Debian's nginx.conf runs
// sites-enabled/*.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "@fedify/fixture";

/** Debian's path, else whatever `nginx` the PATH finds. */
export const NGINX: string = existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx";

/** A running nginx. */
export interface Nginx extends AsyncDisposable {
  readonly process: ChildProcess;
  /** What it wrote to stderr and its error log. */
  output(): string;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Starts nginx on `site` (the text of a configuration file for the `http`
 * block) and waits until it accepts connections on `port`.
 * Its prefix is a temporary folder of its own, removed when it is disposed
 * of.
 * @param site The site's configuration.
 * @param port A port the site listens on.
 * @returns The running nginx.
 */
export async function startNginx(site: string, port: number): Promise<Nginx> {
  const prefix = await mkdtemp(join(tmpdir(), "fedwork-nginx-"));
  // Started as root, nginx's workers drop to nobody and must still reach
  // their temporary folders (mkdtemp makes it 0700).
  await chmod(prefix, 0o755);
  await mkdir(join(prefix, "logs"), { recursive: true });
  await writeFile(join(prefix, "site.conf"), site);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((kind) => `  ${kind}_temp_path ${join(prefix, `${kind}_temp`)};`).join("\n");
  await writeFile(
    join(prefix, "nginx.conf"),
    `pid ${join(prefix, "nginx.pid")};
error_log ${join(prefix, "logs", "error.log")} notice;
worker_processes 1;
events { worker_connections 256; }
http {
  access_log ${join(prefix, "logs", "access.log")};
${temp}
  include ${join(prefix, "site.conf")};
}
`,
  );
  const child = spawn(NGINX, [
    "-p",
    prefix,
    "-c",
    join(prefix, "nginx.conf"),
    "-e",
    join(prefix, "logs", "error.log"),
    "-g",
    "daemon off;",
  ], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => output += chunk);
  child.stderr!.on("data", (chunk) => output += chunk);
  const spawned = new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  const stop = async () => {
    if (child.exitCode == null && child.signalCode == null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      // SIGQUIT: nginx's graceful stop.
      child.kill("SIGQUIT");
      await exited;
    }
    await rm(prefix, { recursive: true, force: true });
  };
  try {
    await spawned;
    await waitUntil(async () => {
      if (child.exitCode != null) throw new Error(`nginx exited (${child.exitCode}):\n${output}`);
      return await portOpen(port);
    }, { what: "nginx to listen", timeoutMs: 30_000 });
  } catch (error) {
    await stop();
    throw error;
  }
  return { process: child, output: () => output, [Symbol.asyncDispose]: stop };
}
