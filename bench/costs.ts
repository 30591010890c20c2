// What a million calls of one kind cost in AWS, line by line: the arithmetic of the cost table,
// apart from the measuring, so it can be checked with known inputs.
import type { StoreUse } from './measured.js';
import type { UnitPrices } from './prices.js';

/** One Lambda invocation a call causes: the function's memory and the billed duration estimate. */
export interface Invocation {
  readonly fn: string;
  readonly memoryMb: number;
  readonly durationMs: number;
}

/** What one call of a kind uses, per call. */
export interface CallUsage {
  readonly name: string;
  readonly invocations: readonly Invocation[];
  readonly apiRequests: number;
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly transitions: number;
  readonly kmsRequests: number;
  readonly events: number;
}

/**
 * How an agent follows a held call as an MCP task, for the cost table: assumed, since no run waits
 * minutes for a person.
 */
export interface TaskFollowing {
  /** From the request until someone decides. */
  readonly decisionMs: number;
  /** How often the client asks tasks/get (the interval the gateway suggests). */
  readonly pollIntervalMs: number;
  /** The MCP function answering one of those requests. */
  readonly request: Invocation;
  /** Read units of one request: each reads the record once, by its key. */
  readonly readUnits: number;
}

/** The client's requests: tasks/get at each interval until it sees the decision, then one tasks/result. */
export const taskFollowingRequests = (follow: TaskFollowing): number =>
  Math.ceil(follow.decisionMs / follow.pollIntervalMs) + 1;

/** A held call and what following it as a task adds: an invocation, an API request and a read per request. */
export const followedAsTask = (held: CallUsage, follow: TaskFollowing): CallUsage => {
  const requests = taskFollowingRequests(follow);
  return {
    ...held,
    name: `${held.name}, followed as a task`,
    invocations: [...held.invocations, ...Array.from({ length: requests }, () => follow.request)],
    apiRequests: held.apiRequests + requests,
    readUnits: held.readUnits + requests * follow.readUnits,
  };
};

export type CostItem =
  | 'lambda-duration'
  | 'lambda-requests'
  | 'api-requests'
  | 'dynamodb-writes'
  | 'dynamodb-reads'
  | 'step-functions'
  | 'kms'
  | 'eventbridge';

export interface CostLine {
  readonly item: CostItem;
  readonly label: string;
  /** How much of it a million calls use, in the line's unit. */
  readonly perMillion: number;
  readonly unit: string;
  readonly dollarsPerMillion: number;
}

export const costItems: readonly { readonly item: CostItem; readonly label: string; readonly unit: string }[] = [
  { item: 'lambda-duration', label: 'Lambda duration', unit: 'GB-s' },
  { item: 'lambda-requests', label: 'Lambda requests', unit: 'requests' },
  { item: 'api-requests', label: 'API Gateway requests (HTTP API)', unit: 'requests' },
  { item: 'dynamodb-writes', label: 'DynamoDB write request units', unit: 'WRU' },
  { item: 'dynamodb-reads', label: 'DynamoDB read request units', unit: 'RRU' },
  { item: 'step-functions', label: 'Step Functions state transitions', unit: 'transitions' },
  { item: 'kms', label: 'KMS requests', unit: 'requests' },
  { item: 'eventbridge', label: 'EventBridge events', unit: 'events' },
];

const million = 1_000_000;

/** GB-seconds Lambda bills for one invocation: memory in GB × duration rounded up to the millisecond. */
export const gbSeconds = (invocation: Invocation): number =>
  (invocation.memoryMb / 1024) * (Math.ceil(invocation.durationMs) / 1000);

/**
 * Write request units per call, from the writes counted and the record's size: a unit per KB
 * written, rounded up per write, and once more for the by-agent index, which projects every
 * attribute of every record. Not counted: the sparse index of open calls, which also projects
 * everything and is written while a call is open (a held call's writes until its outcome, a
 * direct call's first write): up to one more copy of those writes.
 */
export const writeUnits = (store: StoreUse): number => store.writes * Math.ceil(store.itemBytes / 1024) * 2;

/** Read request units per call: a unit per 4 KB read, rounded up per read, as if strongly consistent. */
export const readUnits = (store: StoreUse): number => store.reads * Math.ceil(store.itemBytes / 4096);

export const costLines = (usage: CallUsage, prices: UnitPrices): CostLine[] => {
  const perCall: Record<CostItem, { quantity: number; price: number }> = {
    'lambda-duration': {
      quantity: usage.invocations.reduce((sum, invocation) => sum + gbSeconds(invocation), 0),
      price: prices.lambdaGbSecond,
    },
    'lambda-requests': { quantity: usage.invocations.length, price: prices.lambdaRequest },
    'api-requests': { quantity: usage.apiRequests, price: prices.httpApiRequest },
    'dynamodb-writes': { quantity: usage.writeUnits, price: prices.dynamoDbWriteUnit },
    'dynamodb-reads': { quantity: usage.readUnits, price: prices.dynamoDbReadUnit },
    'step-functions': { quantity: usage.transitions, price: prices.stepFunctionsTransition },
    kms: { quantity: usage.kmsRequests, price: prices.kmsRequest },
    eventbridge: { quantity: usage.events, price: prices.eventBridgeEvent },
  };
  return costItems.map(({ item, label, unit }) => ({
    item,
    label,
    unit,
    perMillion: perCall[item].quantity * million,
    dollarsPerMillion: perCall[item].quantity * perCall[item].price * million,
  }));
};

export const totalPerMillion = (lines: readonly CostLine[]): number =>
  lines.reduce((sum, line) => sum + line.dollarsPerMillion, 0);

export const biggestLine = (lines: readonly CostLine[]): CostLine | undefined =>
  lines.reduce<CostLine | undefined>(
    (biggest, line) => (biggest === undefined || line.dollarsPerMillion > biggest.dollarsPerMillion ? line : biggest),
    undefined,
  );

/** What would make each line smaller, for the report's "biggest line" notes. */
export const cuts: Readonly<Record<CostItem, string>> = {
  'lambda-duration':
    'less memory for the function where it does not slow the call, or a shorter handler (the configuration and Cedar are built once per instance; the rest is waiting on the store and the system)',
  'lambda-requests': 'fewer invocations per call: fold the register and run steps of a held call into fewer tasks',
  'api-requests':
    'already the cheapest API type (HTTP API); fewer console round trips per decision; for a call followed as a task, fewer polls (a client asking tasks/get every 30 s instead of 5 s pays a sixth)',
  'dynamodb-writes':
    'fewer writes per call (one write for the token and the notice; no pending-calls reservation for agents without a limit), or a smaller record (a unit per KB, and the by-agent index repeats every write: a KEYS_ONLY or INCLUDE projection would make its copy small)',
  'dynamodb-reads': 'eventually consistent reads where a stale read is safe (half a unit)',
  'step-functions':
    'fewer states per run (the Choice state is a transition too), or an Express workflow for the run step: Express bills a request and its duration, not transitions (the wait for the decision needs Standard: .waitForTaskToken)',
  kms: 'keep verified console sessions and data keys longer per instance',
  eventbridge: 'one event per held call is the floor while approvers are notified through EventBridge',
};

export const dollars = (value: number): string => {
  if (!Number.isFinite(value)) return 'n/a';
  if (value === 0) return '$0';
  return value >= 10 ? `$${value.toFixed(0)}` : `$${value.toFixed(value >= 1 ? 2 : 3)}`;
};

/** The table as Markdown: a column per kind of call, a row per line, and the total. */
export const markdownCostTable = (
  calls: readonly { readonly usage: CallUsage; readonly lines: readonly CostLine[] }[],
): string => {
  const header = `| per million calls | ${calls.map((call) => call.usage.name).join(' | ')} |`;
  const rule = `| --- | ${calls.map(() => '---:').join(' | ')} |`;
  const rows = costItems.map(
    ({ item, label }) =>
      `| ${label} | ${calls.map((call) => dollars(call.lines.find((line) => line.item === item)?.dollarsPerMillion ?? Number.NaN)).join(' | ')} |`,
  );
  const total = `| **total** | ${calls.map((call) => `**${dollars(totalPerMillion(call.lines))}**`).join(' | ')} |`;
  return [header, rule, ...rows, total].join('\n');
};
