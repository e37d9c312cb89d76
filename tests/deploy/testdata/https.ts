// Requests over https to a server whose certificate a test's own CA signed:
// node:https takes the CA per request on Deno, Node.js and Bun alike, where
// fetch() has no such option on Node.js.
import { request } from "node:https";

/** A response, read whole. */
export interface HttpsResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/**
 * Sends a request and reads the response.
 * @param url The https URL.
 * @param options The CA to trust, and the method, headers and body.
 * @returns The response.
 */
export function httpsRequest(
  url: URL | string,
  options: {
    readonly ca: string;
    readonly method?: string;
    readonly headers?: Readonly<Record<string, string>>;
    readonly body?: string | Uint8Array;
  },
): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? "GET",
      headers: options.headers,
      ca: options.ca,
      timeout: 30_000,
    }, (res) => {
      const chunks: Uint8Array[] = [];
      res.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: new TextDecoder().decode(
            chunks.reduce((all, chunk) => {
              const joined = new Uint8Array(all.length + chunk.length);
              joined.set(all);
              joined.set(chunk, all.length);
              return joined;
            }, new Uint8Array()),
          ),
        }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${url}: no answer within 30 s`)));
    req.on("error", reject);
    req.end(options.body);
  });
}
