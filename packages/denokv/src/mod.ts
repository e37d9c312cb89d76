/**
 * `@fedwork/denokv`: a durable message queue and a key–value store on Deno
 * KV (`Deno.openKv()`), for Deno and Deno Deploy-style hosting.
 *
 * @example
 * ```ts ignore
 * import { DenoKvMessageQueue, DenoKvStore } from "@fedwork/denokv";
 *
 * const kv = await Deno.openKv("fedwork.kv");
 * const queue = new DenoKvMessageQueue({ kv });
 * const store = new DenoKvStore({ kv });
 * ```
 * @module
 * @since 0.3.0
 */
export { DenoKvMessageQueue } from "./message-queue.ts";
export type { DenoKvMessageQueueOptions } from "./options.ts";
export { DenoKvStore, type DenoKvStoreOptions } from "./kv-store.ts";
export { DenoKvClosedError } from "./errors.ts";
export type {
  DenoKv,
  DenoKvAtomicOperation,
  DenoKvEntry,
  DenoKvKey,
  DenoKvKeyPart,
} from "./deno-kv.ts";
