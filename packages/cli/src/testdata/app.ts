// The app module the CLI's tests give to `--app`: its default export is a
// function that builds the test federation from the environment.
import process from "node:process";
import { createCliTestFederation } from "./federation.ts";

/** Builds the federation named by FEDWORK_CLI_TEST_BACKEND and _TARGET. */
export default async function () {
  const backend = process.env.FEDWORK_CLI_TEST_BACKEND;
  const target = process.env.FEDWORK_CLI_TEST_TARGET ?? "";
  const { federation } = await createCliTestFederation(
    backend === "postgres"
      ? { backend: "postgres", namespace: target }
      : { backend: "sqlite", path: target },
  );
  return federation;
}
