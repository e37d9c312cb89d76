// Moved to activitypub/network/; kept so that federation/ keeps its imports
// until the wiring step.
export { assertPublicUrl, isNonPublicAddress } from "../activitypub/network/private-address.ts";
