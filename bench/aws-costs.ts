// What a million calls cost in AWS, per kind of call: the stack's own settings (synthesized here
// with bundling skipped: each function's memory, the state machine's type, the API's type) times
// what this run measured (store requests and record sizes counted on the wire, state transitions
// from the approval runs, handler times), priced at bench/prices.ts.
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { GatewayStack } from '../infra/gateway-stack.js';
import { taskPollIntervalMs } from '../shared/edge/mcp/tasks.js';
import {
  biggestLine,
  type CallUsage,
  type CostLine,
  costLines,
  cuts,
  dollars,
  followedAsTask,
  markdownCostTable,
  readUnits,
  type TaskFollowing,
  taskFollowingRequests,
  totalPerMillion,
  writeUnits,
} from './costs.js';
import type { Measured, StoreUse } from './measured.js';
import { pricesAsOf, pricesRegion, unitPrices } from './prices.js';
import { heading, line, type Row, table } from './report.js';
import { ms } from './stats.js';

interface StackSettings {
  readonly memoryMb: { readonly mcp: number; readonly steps: number; readonly console: number };
  readonly stateMachineType: string;
  readonly agentApiType: string;
}

/** The stack as `cdk synth` makes it, without running esbuild; read for what the bill depends on. */
const stackSettings = (): StackSettings => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new GatewayStack(app, 'CostEstimate');
  const template = Template.fromStack(stack);
  const resources = (type: string) => Object.entries(template.findResources(type));
  const memoryOf = (logicalIdStart: string): number => {
    const found = resources('AWS::Lambda::Function').find(([id]) => id.startsWith(logicalIdStart));
    const memory: unknown = found?.[1].Properties?.MemorySize;
    // CloudFormation's default when a function names no memory.
    if (found !== undefined && memory === undefined) return 128;
    if (typeof memory !== 'number') throw new Error(`the stack has no ${logicalIdStart} with a memory size`);
    return memory;
  };
  const machines = resources('AWS::StepFunctions::StateMachine');
  if (machines.length !== 1) throw new Error(`expected one state machine, found ${machines.length}`);
  const machineType: unknown = machines[0]?.[1].Properties?.StateMachineType;
  const apis = resources('AWS::ApiGatewayV2::Api').filter(([id]) => id.startsWith('AgentApi'));
  const apiType: unknown = apis[0]?.[1].Properties?.ProtocolType;
  return {
    memoryMb: {
      mcp: memoryOf('McpFunction'),
      steps: memoryOf('ApprovalsHeldCallStepsFunction'),
      console: memoryOf('ConsoleFunction'),
    },
    stateMachineType: typeof machineType === 'string' ? machineType : 'STANDARD',
    agentApiType: typeof apiType === 'string' ? apiType : 'unknown',
  };
};

const required = <T>(value: T | undefined, what: string): T => {
  if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) {
    throw new Error(`${what} was not measured in this run`);
  }
  return value;
};

const store = (use: StoreUse | undefined, what: string) => {
  const measuredUse = required(use, `the store requests of ${what}`);
  return { writeUnits: writeUnits(measuredUse), readUnits: readUnits(measuredUse) };
};

/**
 * How long a held call waits for its decision when the table follows it as a task: an assumption,
 * of the order of the time to decision at p50 an organization reads from `npm run executions --
 * --stats` (an approver notified while at work, deciding in the same sitting).
 */
const assumedDecisionMs = 10 * 60_000;

/** Following a held call as a task: each request a keyed read of the record, answered like a direct read. */
const taskFollowing = (settings: StackSettings, measured: Measured): TaskFollowing => {
  const record = required(measured.store.heldApproved, 'the store requests of an approved held call');
  return {
    decisionMs: assumedDecisionMs,
    pollIntervalMs: taskPollIntervalMs,
    // A tasks/get reads the record and answers; a direct read's time (a system call too) bounds it.
    request: {
      fn: 'mcp',
      memoryMb: settings.memoryMb.mcp,
      durationMs: required(measured.handlerMs.directRead, 'the MCP function handler time of a direct read'),
    },
    readUnits: readUnits({ writes: 0, reads: 1, itemBytes: record.itemBytes }),
  };
};

/** The five kinds of call, from the stack's settings and this run's measurements. */
export const callUsages = (settings: StackSettings, measured: Measured): CallUsage[] => {
  const { memoryMb } = settings;
  const handler = measured.handlerMs;
  const read = required(handler.directRead, 'the MCP function handler time of a direct read');
  const write = required(handler.directWrite, 'the MCP function handler time of a direct write');
  const hold = required(handler.hold, 'the reply to a held call');
  const register = required(handler.register, 'the register step time');
  const decide = required(handler.decide, "the console's decision time");
  const mcp = (durationMs: number) => ({ fn: 'mcp', memoryMb: memoryMb.mcp, durationMs });
  const steps = (durationMs: number) => ({ fn: 'held-call-steps', memoryMb: memoryMb.steps, durationMs });
  const consolePage = (durationMs: number) => ({ fn: 'console', memoryMb: memoryMb.console, durationMs });
  const approved: CallUsage = {
    name: 'held, approved',
    // The hold; the register step; the approver's decision page and decision; the run step,
    // which makes the same system call and writes as a direct write.
    invocations: [mcp(hold), steps(register), consolePage(decide), consolePage(decide), steps(write)],
    apiRequests: 3,
    ...store(measured.store.heldApproved, 'an approved held call'),
    transitions: required(measured.transitions.approved, 'the transitions of an approved call'),
    // The console checks the approver's session with KMS at most once a minute per instance.
    kmsRequests: 1,
    events: 1,
  };
  return [
    {
      name: 'direct read',
      invocations: [mcp(read)],
      apiRequests: 1,
      ...store(measured.store.directRead, 'a direct read'),
      transitions: 0,
      kmsRequests: 0,
      events: 0,
    },
    {
      name: 'direct write',
      invocations: [mcp(write)],
      apiRequests: 1,
      ...store(measured.store.directWrite, 'a direct write'),
      transitions: 0,
      kmsRequests: 0,
      events: 0,
    },
    approved,
    followedAsTask(approved, taskFollowing(settings, measured)),
    {
      name: 'held, expired',
      invocations: [mcp(hold), steps(register), steps(register)],
      apiRequests: 1,
      ...store(measured.store.heldExpired, 'an expired held call'),
      transitions: required(measured.transitions.expired, 'the transitions of an expired call'),
      kmsRequests: 0,
      events: 1,
    },
  ];
};

const quantity = (value: number): string =>
  value >= 1_000_000 ? `${(value / 1_000_000).toFixed(2)} M` : value.toFixed(value < 10 ? 2 : 0);

export interface CostTable {
  readonly rows: Row[];
  /** The same table as Markdown, for the README. */
  readonly markdown: string;
}

export const awsCosts = async (measured: Measured): Promise<CostTable> => {
  heading(`AWS cost per million calls (${pricesRegion}, arm64, on-demand, prices of ${pricesAsOf}: bench/prices.ts)`);
  const settings = stackSettings();
  if (settings.stateMachineType !== 'STANDARD') {
    throw new Error(`the state machine is ${settings.stateMachineType}: the table prices Standard transitions`);
  }
  line(
    `from the stack: memory mcp ${settings.memoryMb.mcp} MB, held-call steps ${settings.memoryMb.steps} MB, ` +
      `console ${settings.memoryMb.console} MB; state machine ${settings.stateMachineType}; agents' API ${settings.agentApiType}`,
  );
  const { handlerMs } = measured;
  line(
    `Lambda duration: this run's handler time per call as the billed duration: mcp read ${ms(handlerMs.directRead ?? Number.NaN, 1)}, ` +
      `write ${ms(handlerMs.directWrite ?? Number.NaN, 1)} (the bundled function, warm, own process); hold ${ms(handlerMs.hold ?? Number.NaN, 1)} ` +
      `(the local runtime's reply); register step ${ms(handlerMs.register ?? Number.NaN, 1)} (reply → token recorded); ` +
      `console ${ms(handlerMs.decide ?? Number.NaN, 1)} (click → answer, for the page and the decision alike); ` +
      'run step as a direct write; expire step as the register step',
  );
  const calls = callUsages(settings, measured).map((usage) => ({ usage, lines: costLines(usage, unitPrices) }));
  const lineOf = (lines: readonly CostLine[], item: CostLine['item']) => lines.find((entry) => entry.item === item);
  table([
    ['per million calls', ...calls.map((call) => call.usage.name)],
    ...(calls[0]?.lines ?? []).map((first) => [
      `${first.label} (${first.unit})`,
      ...calls.map((call) => {
        const entry = lineOf(call.lines, first.item);
        return entry === undefined ? 'n/a' : `${dollars(entry.dollarsPerMillion)} (${quantity(entry.perMillion)})`;
      }),
    ]),
    ['total', ...calls.map((call) => dollars(totalPerMillion(call.lines)))],
  ]);
  line(
    'store units: writes and reads counted on the wire × the record size (a WRU per KB, twice for the by-agent index, ' +
      'the open-calls index not counted; an RRU per 4 KB); KMS: the console session check (no sealing: the demo arguments hold no secret, and a data ' +
      'key serves an instance five minutes); EventBridge: the held-call notice; not counted: the configuration read ' +
      '(once per instance per refresh), the approver signing in, an agent following a held call with the status tool ' +
      '(as often as it asks, a keyed read each), logs',
  );
  const follow = taskFollowing(settings, measured);
  line(
    `followed as a task: assumed decided ${follow.decisionMs / 60_000} min after the request (time to decision, p50: ` +
      `npm run executions -- --stats); ${taskFollowingRequests(follow)} requests, tasks/get every ` +
      `${follow.pollIntervalMs / 1000} s and one tasks/result, each an MCP invocation of a direct read's time, an API ` +
      'request and one keyed read (tasks/result never waits in AWS: it answers from its one read)',
  );
  for (const call of calls) {
    const biggest = biggestLine(call.lines);
    if (biggest === undefined) continue;
    const share = biggest.dollarsPerMillion / totalPerMillion(call.lines);
    line(
      `${call.usage.name}: biggest line ${biggest.label}, ${dollars(biggest.dollarsPerMillion)} of ` +
        `${dollars(totalPerMillion(call.lines))} (${(share * 100).toFixed(0)}%); to cut it: ${cuts[biggest.item]}`,
    );
  }
  return {
    rows: calls.map((call) => ({
      what: `AWS cost per million calls, ${call.usage.name}`,
      measured: `${dollars(totalPerMillion(call.lines))} (biggest: ${biggestLine(call.lines)?.label ?? 'n/a'})`,
      target: 'reported',
      mark: 'info',
    })),
    markdown: markdownCostTable(calls),
  };
};
