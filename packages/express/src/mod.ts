/**
 * `@fedwork/express`: serve a Fedwork federation from Express, or from a
 * plain `node:http` server.
 * @module
 * @since 0.2.0
 */
export { type ContextDataFactory, integrateFederation, notAcceptableFallback } from "./express.ts";
export {
  createNodeRequestListener,
  type NodeRequestOptions,
  sendFetchResponse,
  toFetchRequest,
} from "./node.ts";
