// Webhooks kept on PostgreSQL.
import { testWebhooks } from "@fedwork/testing";
import { postgresKvSuiteOptions } from "./testdata/kv-store-suite-options.ts";

testWebhooks(postgresKvSuiteOptions);
