/**
 * NodeInfo 2.1: the discovery document and the metadata document, served
 * and fetched.
 * @module
 * @since 0.2.0
 */
export {
  type InboundService,
  type JsonValue,
  type NodeInfo,
  type NodeInfoProtocol,
  nodeInfoToJson,
  type OutboundService,
  type Protocol,
  type Services,
  type Software,
  type Usage,
} from "./document.ts";
export {
  getNodeInfo,
  type GetNodeInfoOptions,
  type NodeInfoMetadataLimits,
  parseNodeInfo,
  type ParseNodeInfoOptions,
} from "./lookup.ts";
