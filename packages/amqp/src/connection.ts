// Opening connections and describing them in errors and logs.
import { type ChannelModel, connect } from "amqplib";
import { AmqpConnectionError } from "./errors.ts";

/**
 * The URL without its password, for error messages and logs.
 */
export function redactUrl(url: string): string {
  return url.replace(/^(amqps?:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

/**
 * Opens a connection named `name` (shown in the broker's management UI and
 * in `rabbitmqctl list_connections client_properties`).  Attaches an `error`
 * listener, because an emitter without one would throw on a server-side
 * close.
 * @throws {AmqpConnectionError} When the broker cannot be reached.
 */
export async function openConnection(
  url: string,
  name: string,
  onError: (error: Error) => void,
): Promise<ChannelModel> {
  let model: ChannelModel;
  try {
    model = await connect(url, { clientProperties: { connection_name: name } });
  } catch (error) {
    throw new AmqpConnectionError(
      `Could not connect to the AMQP broker at ${redactUrl(url)}: ${describeError(error)}. ` +
        "Check that the broker is running and that the url option is right.",
      { cause: error },
    );
  }
  model.on("error", onError);
  return model;
}

/** Closes a connection, ignoring the error of one that is already closed. */
export async function closeQuietly(closable: { close(): Promise<void> } | undefined) {
  try {
    await closable?.close();
  } catch {
    // Already closed, or the socket is gone; either way nothing is left open.
  }
}

/** The message of an error, or the value as text. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
