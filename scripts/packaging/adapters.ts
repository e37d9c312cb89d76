// The adapters' app that scripts/check-packaging.ts runs in its scratch
// project on Node.js, Deno and Bun, against the packed tarballs: one
// federation served through @fedwork/hono (Hono's in-memory request) and
// through @fedwork/express (a real Express server on loopback), each asked
// for an actor; prints one line the check looks for.
import { Person } from "@fedify/vocab";
import { createFederation, MemoryKvStore } from "@fedwork/core";
import { integrateFederation } from "@fedwork/express";
import { federation as serveFederation } from "@fedwork/hono";
import express from "express";
import { Hono } from "hono";
import type { AddressInfo } from "node:net";
import process from "node:process";

const federation = createFederation<void>({ kv: new MemoryKvStore() });
federation.setActorDispatcher(
  "/users/{identifier}",
  (ctx, identifier) =>
    new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier }),
);
const accept = { Accept: "application/activity+json" };

const hono = new Hono();
hono.use(serveFederation(federation, () => undefined));
const viaHono = await hono.request("/users/alice", { headers: accept });

const app = express();
app.use(integrateFederation(federation, () => undefined));
const server = app.listen(0, "127.0.0.1");
await new Promise<void>((resolve) => server.once("listening", () => resolve()));
const { port } = server.address() as AddressInfo;
const viaExpress = await fetch(`http://127.0.0.1:${port}/users/alice`, { headers: accept });
await new Promise<void>((resolve) => server.close(() => resolve()));

const runtime = "Deno" in globalThis ? "Deno" : "Bun" in globalThis ? "Bun" : "Node.js";
const names = [await viaHono.json(), await viaExpress.json()].map((actor) =>
  (actor as { preferredUsername?: string }).preferredUsername
);
if (viaHono.status !== 200 || viaExpress.status !== 200 || names.join() !== "alice,alice") {
  throw new Error(`The adapters answered ${viaHono.status} and ${viaExpress.status}: ${names}.`);
}
console.log(`packaged adapters ran on ${runtime}: Hono and Express served the actor`);
process.exit(0);
