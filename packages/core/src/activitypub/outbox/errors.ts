/**
 * Thrown when an activity is to be delivered but none of the sender's keys
 * is an RSASSA-PKCS1-v1_5 (SHA-256) key, the only kind every ActivityPub
 * server verifies HTTP signatures with.
 * @since 0.2.0
 */
export class MissingSigningKeyError extends TypeError {
  /** The inbox the activity was for. */
  readonly inbox: string;

  /**
   * @param inbox The inbox URL.
   */
  constructor(inbox: string) {
    super(
      `Cannot sign the delivery to ${inbox}: the sender has no RSASSA-PKCS1-v1_5 key. ` +
        'Give the actor an RSA key pair (generateCryptoKeyPair("RSASSA-PKCS1-v1_5")).',
    );
    this.name = "MissingSigningKeyError";
    this.inbox = inbox;
  }
}
