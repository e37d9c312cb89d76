// Per-task retention of the task records on PostgreSQL.
import { testTaskRetention } from "@fedwork/testing";
import { postgresKvSuiteOptions } from "./testdata/kv-store-suite-options.ts";

testTaskRetention(postgresKvSuiteOptions);
