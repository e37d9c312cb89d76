/**
 * Returns a fresh namespace for one test: `fedwork-test-` followed by twelve
 * random lowercase hexadecimal digits, so that it is a valid key prefix,
 * queue name or (quoted) schema name on every engine.
 * @returns The namespace.
 */
export function createTestNamespace(): string {
  const random = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  return `fedwork-test-${random}`;
}
