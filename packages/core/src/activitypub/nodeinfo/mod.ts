/**
 * NodeInfo 2.1: the discovery document and the metadata document, served
 * and fetched.
 * @module
 * @since 0.2.0
 */
export { type NodeInfo, type NodeInfoProtocol, nodeInfoToJson } from "./document.ts";
export {
  getNodeInfo,
  type GetNodeInfoOptions,
  parseNodeInfo,
  type ParseNodeInfoOptions,
} from "./lookup.ts";
