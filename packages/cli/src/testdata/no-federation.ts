// An app module that exports something other than a federation: the CLI
// must refuse it, naming what it wants.
/** Not a federation. */
export default { name: "not a federation" };
