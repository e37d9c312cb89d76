// The Lua scripts behind RedisMessageQueue.  Every state change is one
// script call, so a change is atomic and costs one round trip.  Each script
// is in its own module under scripts/, its header naming its KEYS and ARGV;
// they are TypeScript modules exporting the Lua text so that they load the
// same way on Deno, Node.js and Bun, from sources and from the built package.
//
// Keys of one queue, all sharing the hash tag `{<prefix>:<queue>}` (below
// written `B`) so that they live in one cluster slot:
//   B:seq       counter for message ids
//   B:msg       hash   id -> message JSON (a message exists while it is here)
//   B:okey      hash   id -> ordering key (keyed messages only)
//   B:ready     list   ids a worker may take; pushed on the left, popped on
//                      the right, so the right end is the front of the line
//   B:ready:P   list   the same for priority P (-5 to 5, not 0), whose ids
//                      end in ":pP"; claims pop the highest P first
//   B:delayed   zset   id -> due time (ms, server clock)
//   B:inflight  zset   id -> lease deadline (ms, server clock)
//   B:delivery  hash   id -> how many times it was handed out; the number
//                      of the current hand-out is the lease holder's token
//   B:reset     hash   id -> the B:delivery value at its last redelivery
//                      (plus one per release; written by its first claim):
//                      B:delivery - B:reset is the delivery count handlers
//                      see (see claim.lua.ts)
//   B:pending:K list   ready ids of ordering key K, oldest first; only its
//                      head is ever in B:ready or B:inflight, which is what
//                      keeps same-key messages one at a time and in order;
//                      a message handed back (its handler threw, or asked
//                      for a redelivery) stays its key's head while it
//                      waits in B:delayed, which keeps the key held
//   B:wake      pub/sub channel: ids were made ready; the message is the
//                      enqueuing process's origin (see local-wake.ts), or
//                      a count from the claim script
//   B:dedup:K   string id of the message that holds deduplication key K,
//                      expiring after the key's TTL; the key is held only
//                      while that id is still in B:msg (not acknowledged)
// Pending lists are built from the base name inside the scripts; they share
// the hash tag, so in a cluster they are in the same slot as the declared
// keys.
//
// Ids are zero-padded so that delayed messages with the same due time sort
// by id (enqueue order) in the zset.
import { LuaScript } from "./lua-script.ts";
import { claimLua } from "./claim.lua.ts";
import { depthLua } from "./depth.lua.ts";
import { enqueueDeduplicatedLua } from "./enqueue-deduplicated.lua.ts";
import { enqueueLua } from "./enqueue.lua.ts";
import { heartbeatLua } from "./heartbeat.lua.ts";
import { redeliverLua } from "./redeliver.lua.ts";

/** The names of the keys of one queue. */
export interface QueueKeys {
  readonly base: string;
  readonly seq: string;
  readonly msg: string;
  readonly okey: string;
  readonly ready: string;
  readonly delayed: string;
  readonly inflight: string;
  readonly delivery: string;
  readonly reset: string;
  readonly wake: string;
}

/**
 * Returns the key names of the queue `queue` under `prefix`.
 * @param prefix The key prefix, e.g. `"fedwork"`.
 * @param queue The queue name.
 */
export function queueKeys(prefix: string, queue: string): QueueKeys {
  const base = `{${prefix}:${queue}}`;
  return {
    base,
    seq: `${base}:seq`,
    msg: `${base}:msg`,
    okey: `${base}:okey`,
    ready: `${base}:ready`,
    delayed: `${base}:delayed`,
    inflight: `${base}:inflight`,
    delivery: `${base}:delivery`,
    reset: `${base}:reset`,
    wake: `${base}:wake`,
  };
}

/** Adds messages (see scripts/enqueue.lua.ts). */
export const enqueueScript: LuaScript = new LuaScript(enqueueLua);

/** Adds one message unless its deduplication key is held. */
export const enqueueDeduplicatedScript: LuaScript = new LuaScript(enqueueDeduplicatedLua);

/**
 * Acknowledges, hands back and hands out messages in one call (see
 * scripts/claim.lua.ts).
 */
export const claimScript: LuaScript = new LuaScript(claimLua);

/** Replaces a running message and schedules it again. */
export const redeliverScript: LuaScript = new LuaScript(redeliverLua);

/** Extends the leases of messages a listener holds. */
export const heartbeatScript: LuaScript = new LuaScript(heartbeatLua);

/** Counts messages. */
export const depthScript: LuaScript = new LuaScript(depthLua);
