// Reading metrics in tests through the OpenTelemetry SDK's in-memory
// exporter.  Not exported from mod.ts.
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";

/** A meter provider whose metrics a test can read whenever it wants. */
export function testMeters(): {
  readonly meterProvider: MeterProvider;
  collect(): Promise<MetricData[]>;
  shutdown(): Promise<void>;
} {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter,
    // Exports happen on forceFlush(); the interval only has to be long.
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meterProvider,
    async collect(): Promise<MetricData[]> {
      exporter.reset();
      await reader.forceFlush();
      return exporter.getMetrics().flatMap((resource) =>
        resource.scopeMetrics.flatMap((scope) => scope.metrics)
      );
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/** The value of a counter's data points with these attributes (0 if none). */
export function count(
  metrics: MetricData[],
  name: string,
  attributes: Record<string, string>,
): number {
  const metric = metrics.find((m) => m.descriptor.name === name);
  if (metric == null) return 0;
  let total = 0;
  for (const point of metric.dataPoints) {
    const matches = Object.entries(attributes).every(([k, v]) => point.attributes[k] === v);
    if (matches && typeof point.value === "number") total += point.value;
  }
  return total;
}

/** How many values a histogram recorded with these attributes. */
export function histogramCount(
  metrics: MetricData[],
  name: string,
  attributes: Record<string, string>,
): number {
  const metric = metrics.find((m) => m.descriptor.name === name);
  if (metric == null) return 0;
  if (metric.dataPointType !== DataPointType.HISTOGRAM) {
    throw new TypeError(`${name} is not a histogram.`);
  }
  let total = 0;
  for (const point of metric.dataPoints) {
    const matches = Object.entries(attributes).every(([k, v]) => point.attributes[k] === v);
    if (matches) total += (point.value as { count: number }).count;
  }
  return total;
}
