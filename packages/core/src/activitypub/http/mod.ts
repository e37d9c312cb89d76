/**
 * HTTP plumbing for ActivityPub resources: the URI template router, content
 * negotiation and response helpers.
 * @module
 * @since 0.2.0
 */
// The router, URI templates, content negotiation and response helpers are
// the federation's own machinery, imported by path; only the errors an
// application can meet are public.
export { RouteConflictError, UriBuildError } from "./errors.ts";
export {
  respondWithObject,
  respondWithObjectIfAcceptable,
  type RespondWithObjectOptions,
} from "./respond.ts";
