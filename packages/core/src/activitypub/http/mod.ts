/**
 * HTTP plumbing for ActivityPub resources: the URI template router, content
 * negotiation and response helpers.
 * @module
 * @since 0.2.0
 */
export { RouteConflictError, UriBuildError, UriTemplateError } from "./errors.ts";
export { acceptsJsonLd, ACTIVITY_JSON_MEDIA_TYPE } from "./negotiation.ts";
export {
  createActivityJsonResponse,
  createNotAcceptableResponse,
  createNotFoundResponse,
} from "./responses.ts";
export { type RouteMatch, Router } from "./router.ts";
export {
  expandUriTemplate,
  findCommonPath,
  matchUriTemplate,
  parseUriTemplate,
  type UriTemplate,
  type UriTemplateToken,
} from "./uri-template.ts";
