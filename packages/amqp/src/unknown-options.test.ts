// The constructor refuses options it does not know, with the nearest name,
// so that a misspelt or ported setting never goes silently without effect.
// Nothing connects: the check runs before the first connection.
import { assertEquals, assertMatch, assertThrows, test } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { AmqpMessageQueue } from "./message-queue.ts";
import type { AmqpMessageQueueOptions } from "./options.ts";
import { AMQP_URL } from "./testdata/conformance-factory.ts";

test("new AmqpMessageQueue() refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () => new AmqpMessageQueue({ url: AMQP_URL, prefech: 8 } as AmqpMessageQueueOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "prefech");
  assertMatch(
    error.message,
    /^Unknown option prefech of new AmqpMessageQueue\(\); did you mean prefetch\?/,
  );
});
