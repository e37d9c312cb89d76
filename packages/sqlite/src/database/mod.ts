export * from "./driver.ts";
export * from "./errors.ts";
export * from "./identifier.ts";
