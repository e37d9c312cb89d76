// One microblog server: a node:http server (which Deno and Bun provide too)
// for the web role, queue workers for the worker role, or both.
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  createHealthHandler,
  type DurationInput,
  type FederationCloseOptions,
} from "@fedwork/core";
import { createNodeRequestListener } from "@fedwork/express";
import { SqliteKvStore } from "@fedwork/sqlite";
import { openBackends } from "./backends.ts";
import { createMicroblog, type Microblog } from "./federation.ts";
import { Store } from "./store.ts";
import { createFetchHandler } from "./web.ts";

/** What a process runs: the web server, the queue workers, or both. */
export type Role = "web" | "worker" | "all";

/** Options for {@link startInstance}. */
export interface InstanceOptions {
  /** Names the instance's queue and keys on a shared engine. */
  readonly name: string;
  /** The data folder (created when missing). */
  readonly dataDir: string;
  /** @default "all" */
  readonly role?: Role;
  /** The loopback port to listen on; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** The public origin. @default `http://127.0.0.1:<port>` */
  readonly origin?: URL;
  /** Local users to create at start (with fresh keys) when missing. */
  readonly users?: readonly string[];
  /** See {@link FetchHandlerOptions.apiToken}. */
  readonly apiToken?: string;
  /**
   * Lets a prober on another machine ask `/readyz` with
   * `Authorization: Bearer <token>` (16 characters or more); without it,
   * only requests to the port from this machine that no proxy forwarded.
   */
  readonly healthToken?: string;
  /** @default `{ seconds: 10 }` */
  readonly welcomeDelay?: DurationInput;
  /** @default `{ hours: 1 }` */
  readonly digestEvery?: DurationInput;
  /** `REDIS_URL`, `POSTGRES_URL`, `AMQP_URL`. @default `{}` */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The SQLite queue's poll interval. */
  readonly pollIntervalMs?: number;
}

/** A running instance. */
export interface Instance extends AsyncDisposable {
  readonly app: Microblog;
  /** The origin, e.g. `http://127.0.0.1:8000`. */
  readonly url: URL;
  /** "SQLite queue, SQLite KV" and the like. */
  readonly backends: string;
  /**
   * Stops the web server, closes the federation (its workers stop taking
   * messages; running ones get `options.grace`), then closes the queue and
   * stores.  A second call may only shorten the grace.
   */
  close(options?: FederationCloseOptions): Promise<void>;
}

/** Starts a microblog server. */
export async function startInstance(options: InstanceOptions): Promise<Instance> {
  const role = options.role ?? "all";
  await mkdir(options.dataDir, { recursive: true });
  let server: Server | undefined;
  let port = options.port ?? 0;
  if (role !== "worker") {
    // Listen first: the origin (and so every URI) depends on the port.
    server = createServer();
    await new Promise<void>((resolve, reject) => {
      server!.once("error", reject);
      server!.listen(port, "127.0.0.1", () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  }
  const origin = options.origin ?? new URL(`http://127.0.0.1:${port}`);
  const backends = await openBackends({
    dataDir: options.dataDir,
    instance: options.name,
    env: options.env ?? {},
    pollIntervalMs: options.pollIntervalMs,
  });
  const appKv = new SqliteKvStore({ path: join(options.dataDir, "app.sqlite") });
  const app = createMicroblog({
    origin,
    store: new Store(appKv),
    kv: backends.kv,
    queue: backends.queue,
    allowPrivateAddress: ["127.0.0.1", "localhost", "[::1]"].includes(origin.hostname),
    welcomeDelay: options.welcomeDelay ?? { seconds: 10 },
    digestEvery: options.digestEvery ?? { hours: 1 },
  });
  // The web process creates users, so two processes never race to.
  if (role !== "worker") { for (const user of options.users ?? []) await app.createUser(user); }
  // Behind a proxy, requests arrive for another origin than the public one.
  const proxied = options.origin == null ? {} : { origin: options.origin };
  const web = createNodeRequestListener(
    createFetchHandler(app, { apiToken: options.apiToken }),
    proxied,
  );
  // /healthz and /readyz (see docs/manual/health.md): for a prober on this
  // machine asking the port directly, or anyone with HEALTH_TOKEN; a
  // request that came through the proxy is refused.
  const health = createHealthHandler(app.federation, {
    ...(options.healthToken == null ? {} : { token: options.healthToken }),
  });
  server?.on("request", (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/healthz" && path !== "/readyz") return web(req, res);
    const remoteAddress = req.socket.remoteAddress;
    createNodeRequestListener((request) => health(request, { remoteAddress }), proxied)(req, res);
  });
  let workers: Promise<void> | undefined;
  if (role !== "web") {
    await app.scheduleDigest();
    // Runs until federation.close() (see close() below).
    workers = app.federation.startQueue(undefined, { shutdownTimeout: { seconds: 5 } });
  }
  let closed: Promise<void> | undefined;
  const close = (closeOptions?: FederationCloseOptions): Promise<void> => {
    // Every call reaches the federation: a second one may shorten the grace.
    const federationClosed = app.federation.close(closeOptions);
    closed ??= (async () => {
      if (server != null) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
      await federationClosed;
      await workers;
      // The federation leaves the engines to their owner: this instance.
      await backends[Symbol.asyncDispose]();
      await appKv[Symbol.asyncDispose]();
    })();
    return federationClosed.then(() => closed);
  };
  return {
    app,
    url: origin,
    backends: backends.description,
    close,
    [Symbol.asyncDispose]: () => close({ grace: { seconds: 0 } }),
  };
}
