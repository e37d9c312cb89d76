// The connection every SQLite engine (store, queue, pub/sub) opens on first
// use: constructors stay synchronous, a file that cannot be opened yet is
// tried again at the next use, and closing waits for an open in progress.
import { SqliteClosedError } from "./errors.ts";

/** A connection opened on first use and closed once.  Internal. */
export class LazyConnection<T extends { readonly database: { close(): void } }> {
  readonly #open: () => Promise<T>;
  readonly #engine: string;
  #pending: Promise<T> | undefined;
  #closed = false;

  /**
   * @param engine The engine's class name, for the error after closing.
   * @param open Opens and prepares the connection.
   */
  constructor(engine: string, open: () => Promise<T>) {
    this.#engine = engine;
    this.#open = open;
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The connection, opened now if it is not yet.
   * @throws {SqliteClosedError} After {@link close}.
   */
  get(): Promise<T> {
    if (this.#closed) return Promise.reject(new SqliteClosedError(this.#engine));
    this.#pending ??= this.#open().catch((error) => {
      // Let the next call try again (the file may become writable).
      this.#pending = undefined;
      throw error;
    });
    return this.#pending;
  }

  /** Refuses further use, and closes the database once any open has ended. */
  async close(): Promise<void> {
    this.#closed = true;
    const connection = await this.#pending?.catch(() => undefined);
    this.#pending = undefined;
    connection?.database.close();
  }
}
