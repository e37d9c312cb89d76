// The codec lives in codec/; this module keeps the path other modules
// import it by.
export * from "./codec/mod.ts";
