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
 * Where the queue's broker is, for messages: the URL without its password,
 * or the connection passed in.
 */
export function describeBroker(options: ConnectionSettings): string {
  return options.connection == null
    ? `the AMQP broker at ${redactUrl(options.url)}`
    : "the AMQP broker of the connection passed in";
}

/** How a queue reaches its broker: a URL, or a connection passed in. */
export interface ConnectionSettings {
  readonly url: string;
  readonly connection: ChannelModel | undefined;
}

/**
 * Opens a connection named `name` (shown in the broker's management UI and
 * in `rabbitmqctl list_connections client_properties`), or, when the queue
 * was given a connection, borrows that one (see {@link borrowConnection}).
 * Attaches an `error` listener, because an emitter without one would throw
 * on a server-side close.
 * @throws {AmqpConnectionError} When the broker cannot be reached, or the
 *         connection passed in is closed.
 */
export async function openConnection(
  settings: ConnectionSettings,
  name: string,
  onError: (error: Error) => void,
): Promise<ChannelModel> {
  if (settings.connection != null) return borrowConnection(settings.connection, onError);
  const { url } = settings;
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

/**
 * A view of a connection the queue was given (Fedify's form): it opens
 * channels on that connection and listens to its events like a connection
 * of the queue's own, but closing it closes only the channels opened
 * through it and removes its listeners: the connection itself stays open,
 * its owner's to close.  Once that connection is closed, the queue cannot
 * reopen it: borrowing fails, and listeners keep retrying in vain until
 * stopped.
 * @throws {AmqpConnectionError} When the connection is already closed.
 */
function borrowConnection(model: ChannelModel, onError: (error: Error) => void): ChannelModel {
  const channels = new Set<{ close(): Promise<void> }>();
  const listeners: [string, (...args: unknown[]) => void][] = [];
  let closed = false;
  const track = <T extends { close(): Promise<void>; once(event: string, f: () => void): T }>(
    channel: T,
  ): T => {
    if (closed) {
      void closeQuietly(channel);
      throw new AmqpConnectionError("The borrowed AMQP connection view was closed.");
    }
    channels.add(channel);
    channel.once("close", () => channels.delete(channel));
    return channel;
  };
  const opening = async <T>(open: () => Promise<T>): Promise<T> => {
    try {
      return await open();
    } catch (error) {
      throw new AmqpConnectionError(
        "Could not open a channel on the AMQP connection passed in " +
          `(is it closed?): ${describeError(error)}.`,
        { cause: error },
      );
    }
  };
  const view = {
    on(event: string, listener: (...args: unknown[]) => void) {
      model.on(event, listener);
      listeners.push([event, listener]);
      return view;
    },
    createChannel: async () => track(await opening(() => model.createChannel())),
    createConfirmChannel: async () => track(await opening(() => model.createConfirmChannel())),
    async close() {
      closed = true;
      for (const [event, listener] of listeners.splice(0)) model.off(event, listener);
      await Promise.all([...channels].map(closeQuietly));
      channels.clear();
    },
  };
  view.on("error", onError as (...args: unknown[]) => void);
  return view as unknown as ChannelModel;
}
