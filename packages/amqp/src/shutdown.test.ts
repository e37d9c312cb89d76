// Clean shutdown on RabbitMQ: a SIGTERMed worker process closes its
// channels and connection and exits by itself, and the broker hands the
// task its grace cut short to another process.
import { testGracefulShutdown } from "@fedwork/testing";

testGracefulShutdown({
  name: "AmqpMessageQueue",
  backendModule: new URL("./testdata/shutdown-backend.ts", import.meta.url).href,
  durable: true,
});
