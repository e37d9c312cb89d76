// The version of Fedwork in one place, for the User-Agent of every outgoing
// request and for the tracer's instrumentation scope.  scripts/check-versions.ts
// checks that it is the version in the packages' manifests.

/** The version of the Fedwork packages this core belongs to. */
export const FEDWORK_VERSION = "0.4.0";

/** The `User-Agent` Fedwork sends when the app names none. */
export const DEFAULT_USER_AGENT = `Fedwork/${FEDWORK_VERSION}`;
