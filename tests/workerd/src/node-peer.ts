// The Fedwork server on Node.js that the federation tests inside workerd
// talk to (scripts/workerd-tests.ts starts it before the Worker).  It has
// one actor, bob, with an RSA key pair; when a Follow of bob arrives, its
// inbox has already verified the HTTP signature (fetching the follower's
// key from the Worker over HTTP), and the listener answers with an Accept
// signed with bob's key, delivered to the follower's inbox at once (no
// queue).  The federation itself comes from one-actor-federation.ts.
import { Accept, Follow } from "@fedify/vocab";
import { startTestServer } from "@fedwork/testing";
import { oneActorFederation } from "./one-actor-federation.ts";

/** The running Node.js server. */
export interface NodePeer {
  /** Its origin, e.g. `http://127.0.0.1:43210`. */
  readonly origin: string;
  /** Stops the server. */
  close(): Promise<void>;
}

/** Starts the Node.js server on a free loopback port. */
export async function startNodePeer(): Promise<NodePeer> {
  const federation = await oneActorFederation("bob");
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      const followee = ctx.parseUri(follow.objectId);
      if (followee?.type !== "actor" || followee.identifier !== "bob") return;
      const follower = await follow.getActor(ctx);
      if (follower?.id == null || follower.inboxId == null) {
        throw new Error(`Could not fetch the follower ${follow.actorId?.href}.`);
      }
      const actor = ctx.getActorUri("bob");
      await ctx.sendActivity(
        { identifier: "bob" },
        follower,
        new Accept({
          id: new URL(`#accepts/${crypto.randomUUID()}`, actor),
          actor,
          object: follow,
        }),
      );
    });
  const server = await startTestServer((request) =>
    federation.fetch(request, { contextData: undefined })
  );
  return {
    origin: server.url.origin,
    close: () => server.close(),
  };
}
