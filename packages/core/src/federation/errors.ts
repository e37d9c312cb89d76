// Moved to activitypub/http/ (which collection registration throws it from).
export { DuplicateRegistrationError } from "../activitypub/http/errors.ts";

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
