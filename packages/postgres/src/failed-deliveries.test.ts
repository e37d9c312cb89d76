// Failed deliveries and dead hosts with the records on PostgreSQL.
import { testFailedDeliveries } from "@fedwork/testing";
import { postgresKvSuiteOptions } from "./testdata/kv-store-suite-options.ts";

testFailedDeliveries(postgresKvSuiteOptions);
