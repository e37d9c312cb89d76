/**
 * Outgoing activities: signed delivery to one inbox with the double knock.
 * @module
 * @since 0.2.0
 */
export {
  deliverSignedActivity,
  type DeliverSignedActivityOptions,
  type DeliveryResult,
  type SenderKey,
} from "./deliver.ts";
export { MissingSigningKeyError } from "./errors.ts";
