// Reading CloudWatch embedded-metric-format lines back, as CloudWatch does: each line's
// `_aws.CloudWatchMetrics` block names the namespace, the dimension sets and the metrics, whose
// values (one number or a list) and dimension values are the line's root keys.
import * as z from 'zod';

const EmfLine = z
  .object({
    _aws: z.object({
      Timestamp: z.number(),
      CloudWatchMetrics: z
        .array(
          z.object({
            Namespace: z.string(),
            Dimensions: z.array(z.array(z.string())),
            Metrics: z.array(z.object({ Name: z.string(), Unit: z.string() })),
          }),
        )
        .length(1),
    }),
  })
  .catchall(z.union([z.string(), z.number(), z.array(z.number())]));

/** One metric's values under one set of dimensions, as CloudWatch would store it. */
export interface MetricPoint {
  readonly namespace: string;
  readonly name: string;
  readonly unit: string;
  /** Dimension name to value, for this dimension set. */
  readonly dimensions: Readonly<Record<string, string>>;
  readonly values: readonly number[];
}

export interface ParsedLine {
  /** Every root key of the line besides `_aws`: dimension values and metric values. */
  readonly properties: Readonly<Record<string, unknown>>;
  readonly points: readonly MetricPoint[];
}

/** Parses one EMF line; throws when it is not one. */
export const parseEmfLine = (line: string): ParsedLine => {
  const parsed = EmfLine.parse(JSON.parse(line));
  const { _aws: block, ...properties } = parsed;
  const directive = block.CloudWatchMetrics[0];
  if (directive === undefined) throw new Error('an EMF line without its metrics directive');
  const points = directive.Dimensions.flatMap((set) =>
    directive.Metrics.map((metric): MetricPoint => {
      const value = properties[metric.Name];
      const dimensions = Object.fromEntries(
        set.map((name) => {
          const dimension = properties[name];
          if (typeof dimension !== 'string') throw new Error(`dimension ${name} has no string value`);
          return [name, dimension];
        }),
      );
      const values = Array.isArray(value) ? value : typeof value === 'number' ? [value] : [];
      if (values.length === 0) throw new Error(`metric ${metric.Name} has no value`);
      return { namespace: directive.Namespace, name: metric.Name, unit: metric.Unit, dimensions, values };
    }),
  );
  return { properties, points };
};

export const parseEmfLines = (lines: readonly string[]): MetricPoint[] =>
  lines.flatMap((line) => parseEmfLine(line).points);

/** The values of a metric recorded under exactly these dimensions (besides `service`). */
export const valuesOf = (
  points: readonly MetricPoint[],
  name: string,
  dimensions: Readonly<Record<string, string>> = {},
): number[] =>
  points
    .filter((point) => {
      if (point.name !== name) return false;
      const { service: _service, ...rest } = point.dimensions;
      const wanted = Object.entries(dimensions);
      return Object.keys(rest).length === wanted.length && wanted.every(([key, value]) => rest[key] === value);
    })
    .flatMap((point) => point.values);

/** The sum of a metric under exactly these dimensions (besides `service`). */
export const sumOf = (
  points: readonly MetricPoint[],
  name: string,
  dimensions: Readonly<Record<string, string>> = {},
): number => valuesOf(points, name, dimensions).reduce((total, value) => total + value, 0);
