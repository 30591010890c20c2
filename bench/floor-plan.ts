// What the first-call floor (cold-start-floor.ts) sends, written by the bench beside its bundle from
// what the MCP function's first call sent, and read by the floor on its first call. Kept apart from
// the floor so the bench reads the shape without making the floor's clients.

/** The file beside the floor's bundle. */
export const floorPlanFile = 'first-call-floor.json';

export interface FloorPlan {
  /** The system call: a GET of this URL with these headers, as the function sent it. */
  readonly systemUrl: string;
  readonly systemHeaders: Readonly<Record<string, string>>;
  /** What the configuration's signature is over (the pointer's version and hash), base64. */
  readonly signedMessage: string;
  /** The record the function wrote for the same call, written again under a fresh id. */
  readonly record: Readonly<Record<string, unknown>>;
}

export const isFloorPlan = (value: unknown): value is FloorPlan =>
  typeof value === 'object' &&
  value !== null &&
  'systemUrl' in value &&
  typeof value.systemUrl === 'string' &&
  'systemHeaders' in value &&
  typeof value.systemHeaders === 'object' &&
  'signedMessage' in value &&
  typeof value.signedMessage === 'string' &&
  'record' in value &&
  typeof value.record === 'object';
