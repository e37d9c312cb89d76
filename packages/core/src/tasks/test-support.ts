// Helpers shared by the task tests; not part of the public API.
import { configure, type LogRecord, reset } from "@logtape/logtape";

/** Runs `fn` with LogTape records under ["fedwork"] captured. */
export async function withLogs<T>(fn: (records: LogRecord[]) => Promise<T>): Promise<T> {
  const records: LogRecord[] = [];
  await configure({
    sinks: { buffer: (record: LogRecord) => records.push(record) },
    loggers: [
      { category: ["fedwork"], sinks: ["buffer"], lowestLevel: "debug" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
    reset: true,
  });
  try {
    return await fn(records);
  } finally {
    await reset();
  }
}
