/**
 * Thrown when Fedwork refuses to contact a URL because it points to a
 * loopback, private or otherwise non-public address and the
 * `allowPrivateAddress` option is `false` (the default).
 * @since 0.1.0
 */
export class PrivateAddressError extends Error {
  /** The refused URL. */
  readonly url: string;

  /**
   * @param url The refused URL.
   * @param address The non-public address it resolved to.
   */
  constructor(url: string, address: string) {
    super(
      `Refusing to contact ${url}: it resolves to the non-public address ${address}. ` +
        "Set the allowPrivateAddress option to true to allow this (for tests and " +
        "development only).",
    );
    this.name = "PrivateAddressError";
    this.url = url;
  }
}
