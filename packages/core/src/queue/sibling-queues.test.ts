import { assertEquals, assertStrictEquals, assertThrows, test } from "@fedify/fixture";
import { SiblingQueues } from "./sibling-queues.ts";

class FakeQueue implements AsyncDisposable {
  readonly channel: string;
  disposed = false;
  constructor(channel: string) {
    this.channel = channel;
  }
  [Symbol.asyncDispose](): Promise<void> {
    this.disposed = true;
    return Promise.resolve();
  }
}

test("SiblingQueues hands out the same sibling for the same channel", () => {
  const created: string[] = [];
  const siblings = new SiblingQueues((channel) => (created.push(channel), new FakeQueue(channel)));
  const first = siblings.derive("images");
  assertStrictEquals(siblings.derive("images"), first);
  assertEquals(siblings.derive("video").channel, "video");
  assertEquals(created, ["images", "video"]);
});

test("SiblingQueues checks the channel before asking whether the queue is open", () => {
  const siblings = new SiblingQueues((channel) => new FakeQueue(channel), {
    assertOpen: () => {
      throw new RangeError("closed");
    },
  });
  assertThrows(() => siblings.derive("Not A Channel"), TypeError, "derive()");
  assertThrows(() => siblings.derive("images"), RangeError, "closed");
});

test("SiblingQueues.disposeAll disposes every sibling created so far", async () => {
  const siblings = new SiblingQueues((channel) => new FakeQueue(channel));
  const made = [siblings.derive("a"), siblings.derive("b")];
  await siblings.disposeAll();
  assertEquals(made.map((queue) => queue.disposed), [true, true]);
});
