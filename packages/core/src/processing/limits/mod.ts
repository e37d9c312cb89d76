/**
 * Limits shared by tasks and deliveries, on the key–value store's `cas()`:
 * counted slots per key with leases (concurrency) and reserved start times
 * per key (rates).
 * @module
 * @since 0.4.0
 */
export {
  createKeySlots,
  type HeldKeySlot,
  type KeySlots,
  type RefusedKeySlot,
} from "./key-slots.ts";
export {
  createKeyRate,
  type KeyRate,
  KeyRateContendedError,
  type KeyRateReservation,
} from "./key-rate.ts";
