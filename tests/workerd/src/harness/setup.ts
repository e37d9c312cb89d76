// Loaded before every test module in the workerd bundle.
//
// ArkType compiles each type with `new Function()` unless it finds that
// the platform forbids it, and it asks when it loads: in a Worker's global
// scope, where workerd still allows code generation, so it would compile,
// and then fail in a request handler, where workerd forbids it.  A Worker
// that validates task payloads with ArkType needs this same setting.
import { configure } from "arktype/config";

configure({ jitless: true });
