/**
 * NodeInfo 2.1: the discovery document and the metadata document.
 * @module
 * @since 0.2.0
 */
export type { NodeInfo, NodeInfoProtocol } from "./document.ts";
