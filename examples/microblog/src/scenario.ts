// The demo's script, driven through the servers' real HTTP ports only:
// alice follows bob, bob accepts, bob posts a note with a link, the note
// reaches alice, bob's welcome note arrives after its delay, the link
// preview is stored, alice likes the note and bob's count goes up.  Shared
// by `npm run demo` and the end-to-end test.
import type { Follower, Following, Post, ReceivedNote } from "./store.ts";

/** What GET /api/users/:name answers. */
export interface UserState {
  readonly name: string;
  readonly handle: string;
  readonly url: string;
  readonly posts: (Post & { readonly url: string })[];
  readonly followers: Follower[];
  readonly following: Following[];
  readonly received: ReceivedNote[];
}

/** One server and the user the scenario acts as there. */
export interface ScenarioUser {
  readonly origin: URL;
  readonly name: string;
  readonly apiToken?: string;
}

/** Options for {@link runScenario}. */
export interface ScenarioOptions {
  readonly alice: ScenarioUser;
  readonly bob: ScenarioUser;
  /** The page bob links to (its <title> becomes the preview). */
  readonly linkUrl: string;
  /** Called as each step completes, with the milliseconds since the start. */
  readonly onStep?: (elapsedMs: number, message: string) => void;
  /** How long each step may take. @default 30 seconds */
  readonly stepTimeoutMs?: number;
}

/** What the scenario saw, for the test's assertions. */
export interface ScenarioResult {
  readonly alice: UserState;
  readonly bob: UserState;
  /** From bob's post to the welcome note's arrival (it was sent earlier). */
  readonly elapsedMs: number;
}

/** Raised when a step does not complete in time. */
export class ScenarioStepTimeoutError extends Error {
  constructor(step: string, timeoutMs: number) {
    super(`The demo waited ${timeoutMs} ms for ${step}; it did not happen.`);
    this.name = "ScenarioStepTimeoutError";
  }
}

/**
 * Calls a user's JSON API: a GET for `action` "", else a POST of `body`.
 * Both carry the API token when there is one (a GET with it also lists the
 * followers-only and direct notes the user received); a POST is JSON, the
 * only type the API takes, since a cross-site HTML form cannot send it.
 * @throws {Error} When the server answers an error.
 */
export async function call(user: ScenarioUser, action: string, body?: unknown): Promise<unknown> {
  const url = new URL(`/api/users/${user.name}${action === "" ? "" : `/${action}`}`, user.origin);
  const authorization: Record<string, string> = user.apiToken == null
    ? {}
    : { Authorization: `Bearer ${user.apiToken}` };
  const response = await fetch(
    url,
    body === undefined ? { headers: authorization } : {
      method: "POST",
      headers: { "Content-Type": "application/json", ...authorization },
      body: JSON.stringify(body),
    },
  );
  const result = await response.json();
  if (!response.ok) {
    throw new Error(`${action || "state"} of ${user.name}: ${JSON.stringify(result)}`);
  }
  return result;
}

/** Reads a user's state from their server's JSON API. */
export function readState(user: ScenarioUser): Promise<UserState> {
  return call(user, "") as Promise<UserState>;
}

/** Runs the scenario; resolves with the final states. */
export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const { alice, bob } = options;
  const started = performance.now();
  const timeout = options.stepTimeoutMs ?? 30_000;
  const step = (message: string) => options.onStep?.(performance.now() - started, message);
  const waitFor = async <T>(
    user: ScenarioUser,
    what: string,
    find: (state: UserState) => T | undefined,
  ): Promise<T> => {
    const deadline = performance.now() + timeout;
    while (true) {
      const found = find(await readState(user));
      if (found !== undefined && found !== false) return found;
      if (performance.now() > deadline) throw new ScenarioStepTimeoutError(what, timeout);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const bobState = await readState(bob);
  const aliceState = await readState(alice);
  await call(alice, "follow", { target: bobState.handle });
  step(`${aliceState.handle} looked up ${bobState.handle} (WebFinger) and sent a Follow`);

  await waitFor(
    bob,
    "the Follow to reach bob",
    (state) => state.followers.find((follower) => follower.id === aliceState.url),
  );
  step(`bob's inbox verified the Follow; ${aliceState.handle} is a follower`);

  await waitFor(
    alice,
    "bob's Accept",
    (state) =>
      state.following.find((followee) =>
        followee.id === bobState.url && followee.state === "accepted"
      ),
  );
  step("alice received bob's Accept (welcome-note task enqueued with a delay)");

  const post = await call(bob, "posts", {
    content: `Hello, fediverse! Typed tasks: ${options.linkUrl}`,
  }) as Post & { url: string };
  step(`bob posted ${post.url}`);

  await waitFor(
    alice,
    "bob's note to reach alice",
    (state) => state.received.find((note) => note.id === post.url),
  );
  step("the note reached alice's inbox (signed delivery through the outbox queue)");

  const preview = await waitFor(
    bob,
    "the link preview",
    (state) => state.posts.find((p) => p.id === post.id)?.preview,
  );
  step(`link-preview task stored the title: "${preview.title}"`);

  await call(alice, "like", { object: post.url });
  step("alice liked the note");
  const likes = await waitFor(bob, "the like count", (state) => {
    const count = state.posts.find((p) => p.id === post.id)?.likes;
    return count != null && count > 0 ? count : undefined;
  });
  step(`refresh-counts task (ordering key per post) counted ${likes} like`);

  const welcome = await waitFor(
    alice,
    "the welcome note",
    (state) => state.received.find((note) => note.visibility === "direct"),
  );
  step(`welcome-note task delivered after its delay: "${welcome.content.replace(/<[^>]*>/g, "")}"`);

  return {
    alice: await readState(alice),
    bob: await readState(bob),
    elapsedMs: performance.now() - started,
  };
}
