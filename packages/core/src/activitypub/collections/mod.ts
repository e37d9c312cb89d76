/**
 * Collections: building what a collection route serves (`Collection`,
 * `OrderedCollection` and their pages) from an application's callbacks,
 * and walking a remote collection page by page within bounds.
 * @module
 * @since 0.3.0
 */
export {
  CollectionTraversalError,
  traverseCollection,
  type TraverseCollectionOptions,
} from "./traverse.ts";
export { buildCollectionSynchronizationHeader } from "./synchronization.ts";
