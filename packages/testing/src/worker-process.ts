// What every worker process of the multi-process suites does the same way:
// reports lines on standard output for the test to wait for, and opens its
// engines through the backend module the test names.  Internal to
// @fedwork/testing; imported only by the worker scripts.
import process from "node:process";

/**
 * Writes a line to standard output and resolves once the runtime has taken
 * it, so that a line written just before the process exits is not lost.
 * @param line The line, without its newline.
 */
export function say(line: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}

/**
 * Imports a backend module and opens its engines for one namespace.
 * @param backendModule The module's URL; it exports `open(namespace)`.
 * @param namespace What the engines share their data under.
 * @returns What `open()` returned.
 * @throws {TypeError} When the module has no `open()`.
 */
export async function openBackendModule<T>(backendModule: string, namespace: string): Promise<T> {
  const imported = await import(backendModule) as {
    open?: (namespace: string) => T | Promise<T>;
  };
  if (typeof imported.open !== "function") {
    throw new TypeError(`The backend module ${backendModule} must export open(namespace).`);
  }
  return await imported.open(namespace);
}
