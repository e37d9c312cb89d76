/**
 * NodeInfo 2.1: the discovery document and the metadata document.
 * @module
 * @since 0.2.0
 */
export {
  createNodeInfoResponse,
  handleNodeInfoWellKnown,
  type NodeInfo,
  NODEINFO_2_1_SCHEMA,
  type NodeInfoProtocol,
  serializeNodeInfo,
} from "./document.ts";
