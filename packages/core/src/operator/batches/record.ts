// A batch's record in the key–value store: its shape, the swap that
// changes it, and what is read from it.
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { BatchSealedError } from "./errors.ts";
import type { BatchStatus } from "./types.ts";

/** How many times a swap is tried before the store is deemed unavailable. */
const MAX_SWAP_ROUNDS = 200;

/** A member's state in its batch's record: pending, completed, failed. */
export type MemberState = "p" | "c" | "f";

/** A batch as the key–value store keeps it. */
export interface BatchRecord {
  readonly id: string;
  readonly baseUrl: string;
  readonly onComplete: string;
  readonly data: unknown;
  readonly members: Readonly<Record<string, MemberState>>;
  readonly state: "open" | "calling" | "called";
  readonly completionTaskId?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function isBatchRecord(value: unknown): value is BatchRecord {
  if (typeof value !== "object" || value == null) return false;
  const record = value as Partial<BatchRecord>;
  return typeof record.id === "string" && typeof record.onComplete === "string" &&
    typeof record.members === "object" && record.members != null &&
    (record.state === "open" || record.state === "calling" || record.state === "called");
}

/**
 * The key–value store key of a batch's record.
 * @param id The batch's id.
 * @returns The key.
 * @since 0.3.0
 */
export function batchKvKey(id: string): KvKey {
  return ["fedwork", "batch", id];
}

/**
 * Reads a batch's record and writes `update(current)` in its place with
 * `cas()`, reading again whenever another process changed it first.
 * @param kv The store; it must have `cas()`.
 * @param batchId The batch.
 * @param update The new record, or `undefined` to write nothing.
 * @param options How long the written record is kept; forever by default.
 * @returns The record as it now is (the written one, or the current one
 *          when `update` returned `undefined`); `undefined` when there is
 *          none.
 * @throws {Error} When the record changed too often in a row.
 * @since 0.3.0
 */
export async function swapBatchRecord(
  kv: KvStore,
  batchId: string,
  update: (current: BatchRecord | undefined) => BatchRecord | undefined,
  options: { readonly retentionMs?: number } = {},
): Promise<BatchRecord | undefined> {
  const key = batchKvKey(batchId);
  for (let round = 0; round < MAX_SWAP_ROUNDS; round++) {
    const value = await kv.get(key);
    const current = isBatchRecord(value) ? value : undefined;
    const next = update(current);
    if (next === undefined) return current;
    const ttl = options.retentionMs == null || options.retentionMs <= 0
      ? undefined
      : { milliseconds: options.retentionMs };
    if (await kv.cas!(key, value, next, ttl == null ? undefined : { ttl })) return next;
    // Another worker wrote first; a short random pause spreads the rounds.
    if (round > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
  }
  throw new Error(`The record of batch ${batchId} changed ${MAX_SWAP_ROUNDS} times in a row.`);
}

/**
 * The record with `ids` added as pending (those it lacks).
 * @param current The record.
 * @param ids The members' ids.
 * @param now The time of the change, as an ISO 8601 timestamp.
 * @returns The new record, or `current` when nothing is new.
 * @throws {BatchSealedError} When something is new and the batch is not
 *         open any more.
 * @since 0.3.0
 */
export function addMembers(current: BatchRecord, ids: readonly string[], now: string): BatchRecord {
  const fresh = ids.filter((id) => current.members[id] === undefined);
  if (fresh.length === 0) return current;
  if (current.state !== "open") {
    throw new BatchSealedError(current.id, "every member is done and it is completing");
  }
  const members = { ...current.members };
  for (const id of fresh) members[id] = "p";
  return { ...current, members, updatedAt: now };
}

/**
 * The status `getBatchStatus()` reports for a record.
 * @param record The record.
 * @returns The status.
 * @since 0.3.0
 */
export function statusOf(record: BatchRecord): BatchStatus {
  let completed = 0;
  const failedIds: string[] = [];
  let total = 0;
  for (const [id, state] of Object.entries(record.members)) {
    total++;
    if (state === "c") completed++;
    else if (state === "f") failedIds.push(id);
  }
  const done = completed + failedIds.length;
  return {
    id: record.id,
    state: record.state === "open"
      ? "running"
      : record.state === "calling"
      ? "completing"
      : "completed",
    total,
    completed,
    failed: failedIds.length,
    pending: total - done,
    progress: total === 0 ? 1 : done / total,
    failedIds,
    onComplete: record.onComplete,
    ...(record.completionTaskId == null ? {} : { completionTaskId: record.completionTaskId }),
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  };
}

/**
 * A JSON round trip of `value`, to keep it in the store as it will be read.
 * @param value The value.
 * @param what What it is, for the error message.
 * @returns The copy.
 * @throws {TypeError} When it is not JSON-compatible.
 * @since 0.3.0
 */
export function jsonCopy(value: unknown, what: string): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`${what} must be JSON-compatible.`, { cause: error });
  }
  if (text === undefined) throw new TypeError(`${what} must be JSON-compatible.`);
  return JSON.parse(text);
}

/**
 * A UUID derived from `seed` (the SHA-256 of it, shaped as a version 8
 * UUID), so that a task run again derives the same ids.
 * @param seed The seed.
 * @returns The UUID.
 * @since 0.3.0
 */
export async function seededUuid(seed: string): Promise<ReturnType<typeof crypto.randomUUID>> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`fedwork-batch:${seed}`)),
  );
  digest[6] = (digest[6] & 0x0f) | 0x80;
  digest[8] = (digest[8] & 0x3f) | 0x80;
  const hex = [...digest.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20, 32)
  }`;
}
