/**
 * Thrown when a dispatcher or listener set is registered twice.
 * @since 0.1.0
 */
export class DuplicateRegistrationError extends Error {
  /** What was registered twice, e.g. `"actor dispatcher"`. */
  readonly registration: string;

  /**
   * @param registration What was registered twice.
   * @param method The registration method, used in the message.
   */
  constructor(registration: string, method: string) {
    super(`The ${registration} is already registered; call ${method}() only once.`);
    this.name = "DuplicateRegistrationError";
    this.registration = registration;
  }
}

// Moved to activitypub/http/ (which the endpoints there throw it from).
export { RouteNotRegisteredError } from "../activitypub/http/errors.ts";

// Moved to activitypub/outbox/ (which operator/host-health/ may import).
export { DeliveryError } from "../activitypub/outbox/errors.ts";

// Moved to activitypub/network/ (which may not import federation/).
export { PrivateAddressError } from "../activitypub/network/errors.ts";

// Moved to options/ (which the option checks of every layer import).
export { FederationOptionError } from "../options/federation-option-error.ts";

// Moved to activitypub/http/ (which the route table beside it imports).
export { RoutePathError } from "../activitypub/http/errors.ts";
