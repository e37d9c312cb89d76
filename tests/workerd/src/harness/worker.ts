// The Worker the workerd runner (scripts/workerd-tests.ts) bundles after
// the test modules it runs, which register their tests in @fedify/fixture's
// testDefinitions when they load (workerd is the fixture's "harness"
// runtime).  Routes:
//   GET /__tests         the registered tests: [{ name, ignore }]
//   GET /__run?index=N   runs test N; answers { name, status, error? }
// Every other request, and every queue batch, goes to the handler the
// running test set with serveRequests() or consumeQueue().  A request per
// test lets the runner print each outcome as it comes and bound each test
// on its own.
import { runTestDefinitions, testDefinitions } from "@fedify/fixture";
import type { WorkersMessageBatch } from "@fedwork/cfworkers";
import { dispatchBatch, dispatchRequest, setWorkerEnv, type WorkerEnv } from "./bindings.ts";

/** What /__run answers for one test. */
export interface WorkerTestResult {
  readonly name: string;
  readonly status: "passed" | "failed" | "ignored";
  readonly error?: { readonly message: string; readonly stack?: string };
}

function describeError(error: unknown): { message: string; stack?: string } {
  if (error instanceof Error) {
    const cause = error.cause == null ? "" : `\nCaused by: ${describeError(error.cause).message}`;
    return {
      message: `${error.name}: ${error.message}${cause}`,
      ...(error.stack == null ? {} : { stack: error.stack }),
    };
  }
  return { message: String(error) };
}

async function runOne(index: number): Promise<WorkerTestResult> {
  const definition = testDefinitions[index];
  if (definition == null) throw new RangeError(`There is no test number ${index}.`);
  const [result] = await runTestDefinitions([definition]);
  return {
    name: result.name,
    status: result.status,
    ...(result.status === "failed" ? { error: describeError(result.error) } : {}),
  };
}

export default {
  async fetch(request: Request, env: WorkerEnv): Promise<Response> {
    setWorkerEnv(env);
    const url = new URL(request.url);
    if (url.pathname === "/__tests") {
      return Response.json(
        testDefinitions.map((definition) => ({
          name: definition.name,
          ignore: definition.ignore ?? false,
        })),
      );
    }
    if (url.pathname === "/__run") {
      return Response.json(await runOne(Number(url.searchParams.get("index"))));
    }
    return await dispatchRequest(request);
  },

  async queue(batch: WorkersMessageBatch, env: WorkerEnv): Promise<void> {
    setWorkerEnv(env);
    await dispatchBatch(batch);
  },
};
