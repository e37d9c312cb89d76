// Moved to activitypub/network/; kept so that federation/ keeps its imports
// until the wiring step.
export {
  createFetchDocumentLoader,
  type FetchDocumentLoaderOptions,
} from "../activitypub/network/document-loader.ts";
