// Order statistics and number formatting for the benchmark's figures.

const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

/** The median (the mean of the two middle values for an even count); NaN for no values. */
export const median = (values: readonly number[]): number => {
  if (values.length === 0) return Number.NaN;
  const ordered = sorted(values);
  const middle = Math.floor(ordered.length / 2);
  return ordered.length % 2 === 1
    ? (ordered[middle] ?? Number.NaN)
    : ((ordered[middle - 1] ?? Number.NaN) + (ordered[middle] ?? Number.NaN)) / 2;
};

/** The nearest-rank quantile (q from 0 to 1); NaN for no values. */
export const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) return Number.NaN;
  const ordered = sorted(values);
  const rank = Math.min(ordered.length, Math.max(1, Math.ceil(q * ordered.length)));
  return ordered[rank - 1] ?? Number.NaN;
};

/** The items in a different order each round (rotated by the round's number), so none always runs first or last. */
export const rotated = <T>(items: readonly T[], round: number): T[] => {
  const start = items.length === 0 ? 0 : round % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
};

export const ms = (value: number, digits = 2): string =>
  Number.isFinite(value) ? `${value.toFixed(digits)} ms` : 'n/a';

export const signedMs = (value: number, digits = 2): string =>
  Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(digits)} ms` : 'n/a';

export const perSecond = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(0)}/s` : 'n/a');

export const ratio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a');

export const kilobytes = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

/** The slope of the least-squares line through the points (y per unit of x); NaN for fewer than two distinct x. */
export const leastSquaresSlope = (points: readonly { readonly x: number; readonly y: number }[]): number => {
  if (points.length < 2) return Number.NaN;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / points.length;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / points.length;
  let covariance = 0;
  let variance = 0;
  for (const point of points) {
    covariance += (point.x - meanX) * (point.y - meanY);
    variance += (point.x - meanX) ** 2;
  }
  return variance === 0 ? Number.NaN : covariance / variance;
};

export const megabytes = (bytes: number, digits = 1): string =>
  Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(digits)} MB` : 'n/a';
