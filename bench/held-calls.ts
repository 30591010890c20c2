// Held calls (erp.purchase_orders.create for 1500: the policy holds it for finance): the reply
// the agent gets, judged against the minimal held server's in the same rounds, and the time from an
// approver's click to the system call; and the steps the measurements of held calls share
// (held-call-costs.ts prices one per outcome).
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { documentClient, localAwsClientConfig, localTableNames } from '../infra/local/dynamodb.js';
import type { LocalRuntime } from '../infra/local/runtime.js';
import { StepFunctionsApprovalRuns } from '../shared/adapters/step-functions-approval-runs.js';
import { decide } from '../shared/use-cases/approver-decisions.js';
import { signedIn } from '../test/support/console.js';
import { approver, type Bed, heldAmount, heldCallTarget, numberedDescription, portOf, waitFor } from './bed.js';
import { benchPendingCalls } from './demo-runtime.js';
import { latencyRounds, printLatency } from './direct-calls.js';
import { floorRow, judgedRatio, type RatioTarget, ratioRow } from './floor-ratios.js';
import { heldPathRow, traceHeldPath } from './held-path.js';
import type { Target } from './load.js';
import type { Measured } from './measured.js';
import { floorAgentOf, startMinimalHeldServer } from './minimal-held-server.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { median, ms, ratio } from './stats.js';

export const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));

/** The held reply's target: the gateway's p50 at most 1.3× its floor's (issue 35). */
export const heldReplyTarget: RatioTarget = { bound: '≤', limit: 1.3, digits: 1 };
export const heldReplyWhat = 'reply to a held call (pending_approval): p50 vs the minimal held server';
export const heldFloorWhat =
  '  floor: the minimal held server (the same call key, pending place, record and run start), p50';

/**
 * The held reply's floor (minimal-held-server.ts), on the runtime's store and Step Functions, with a
 * client of each of its own: its template is a call the gateway held (left waiting, for the rounds'
 * first rejection to close).
 */
export const startHeldFloor = async (
  bed: Pick<Bed, 'runtime' | 'call'>,
): Promise<{ target: Target; close(): Promise<void> }> => {
  const { runtime } = bed;
  const reply = await bed.call(heldAmount, runtime.baseUrl, numberedDescription);
  const template = reply.execution_id === null ? undefined : await runtime.store.get(reply.execution_id);
  if (reply.status !== 'pending_approval' || template === undefined) {
    throw new Error(`a call for ${heldAmount} ended ${reply.status}, not pending_approval`);
  }
  const storeClient = new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials));
  const runsClient = new SFNClient(localAwsClientConfig(runtime.stepFunctions.endpoint, runtime.awsCredentials));
  const floor = await startMinimalHeldServer({
    store: { documents: documentClient(storeClient), tableName: localTableNames.executions, template },
    reply,
    agentId: floorAgentOf(template.agent_id),
    pendingLimit: benchPendingCalls,
    approvalRuns: new StepFunctionsApprovalRuns(runsClient, runtime.stepFunctions.stateMachineArn),
  }).catch((error: unknown) => {
    storeClient.destroy();
    runsClient.destroy();
    throw error;
  });
  const description = 'the same call key, pending place, record and approval run start, nothing else';
  return {
    target: heldCallTarget('held floor', description, floor.url),
    close: async () => {
      await floor.close();
      storeClient.destroy();
      runsClient.destroy();
    },
  };
};

/** The gateway's held calls and the floor's, in the same interleaved rounds; every run closed after. */
const heldRounds = async (bed: Bed, plan: Plan, floor: Target) => {
  const { held } = bed.targets;
  const figures = await latencyRounds(bed, [held, floor], {
    rounds: plan.heldRounds,
    count: plan.heldCount,
    warmup: plan.heldWarmup,
    primer: plan.heldPrimer,
    // The agent's waiting calls share one pending-calls item: the rounds start with it empty, and
    // the rejected calls' approval runs (on this event loop) end before the timing starts.
    primed: async () => {
      await rejectOpenCalls(bed);
      await sleep(500);
    },
  });
  line(`rejected the ${await rejectOpenCalls(bed)} calls left waiting, so their approval runs end`);
  return { gateway: figures(held), floor: figures(floor) };
};

export const heldReply = async (bed: Bed, plan: Plan, measured: Measured): Promise<Row[]> => {
  heading('Reply to a held call (pending_approval), latency mode, against the minimal held server');
  line(
    `${plan.heldPrimer} untimed calls per target (rejected before timing), then ${plan.heldRounds} interleaved ` +
      `rounds × ${plan.heldCount} calls per target (after ${plan.heldWarmup} untimed); ` +
      'erp.purchase_orders.create for 1500, held for finance',
  );
  const floor = await startHeldFloor(bed);
  const figures = await heldRounds(bed, plan, floor.target).finally(() => floor.close());
  const { gateway } = figures;
  printLatency([
    [bed.targets.held, gateway],
    [floor.target, figures.floor],
  ]);
  // The local runtime answers, stores and runs the approval steps on one thread, and the calls come
  // one after another: the thread's CPU per held call bounds how fast the replies can come.
  line(
    "CPU/call: the runtime's thread per held call (the reply, the store, the local Step Functions and the " +
      'approval run’s register and notify steps; median of rounds)',
  );
  const judged = judgedRatio([gateway.p50], [figures.floor.p50], 1);
  line(`gateway / floor, p50: ${ratio(judged.ratio)}`);
  measured.handlerMs.hold = gateway.p50;
  // The same calls one at a time, each approval run's steps over before the next: where the time goes.
  await sleep(500);
  const path = await traceHeldPath(bed.load, bed.targets.held, portOf(bed.runtime.baseUrl), plan);
  line(`rejected the ${await rejectOpenCalls(bed)} traced calls`);
  return [
    ratioRow(heldReplyWhat, judged, heldReplyTarget, ms),
    floorRow(heldFloorWhat, ms(figures.floor.p50)),
    heldPathRow(path),
  ];
};

/**
 * Rejects every call still waiting for a decision. An approval run waits out its approval time (a day
 * here) on a live timer, and stopping the local runtime does not end that wait: decided, it ends.
 */
export const rejectOpenCalls = async (bed: Pick<Bed, 'runtime'>): Promise<number> => {
  const deciding = { id: approver.id, name: null, groups: ['finance'] };
  let rejected = 0;
  // Decided calls leave the index of open calls, so the first page is read until it is empty.
  for (let pages = 0; pages < 1_000; pages += 1) {
    const { items } = await bed.runtime.store.listOpen({ limit: 100 });
    const waiting = items.filter((execution) => execution.status === 'pending_approval');
    if (waiting.length === 0) break;
    for (const execution of waiting) {
      const result = await decide(bed.runtime.approvals, deciding, {
        execution_id: execution.execution_id,
        outcome: 'reject',
        arguments_hash: execution.arguments_hash ?? '',
      });
      if (result.kind === 'decided') rejected += 1;
    }
  }
  // Their approval runs end in the background; the next measurement starts once they have.
  await bed.runtime.stepFunctions.settled();
  return rejected;
};

/** The states in which the approval run ends or runs its last task. */
const lastStates = new Set(['Execute', 'Expire', 'Closed']);

export const statesWhenDone = (runtime: LocalRuntime, executionId: string) =>
  waitFor(
    async () => runtime.stepFunctions.statesEntered(executionId),
    (states) => lastStates.has(states.at(-1) ?? ''),
    5_000,
  );

/**
 * The bench's own reads of the store while it waits (one Query per look), so the store reads a
 * held call costs can be counted without them.
 */
export interface BenchReads {
  count: number;
}

/** Reads the call's record for the bench, counting the read. */
const look = (runtime: LocalRuntime, executionId: string, reads?: BenchReads) => {
  if (reads !== undefined) reads.count += 1;
  return runtime.store.get(executionId);
};

export const outcomeOf = (runtime: LocalRuntime, executionId: string, reads?: BenchReads) =>
  waitFor(
    () => look(runtime, executionId, reads),
    (execution) => execution !== undefined && !['pending_approval', 'approved'].includes(execution.status),
    10_000,
  );

/** Holds a call and waits until its approval run has registered, so the call page can be decided. */
export const holdRegistered = async (bed: Bed, runtime: LocalRuntime = bed.runtime, reads?: BenchReads) => {
  const held = await bed.call(heldAmount, runtime.baseUrl);
  if (held.status !== 'pending_approval' || held.execution_id === null) {
    throw new Error(`a call for 1500 ended ${held.status}, not pending_approval`);
  }
  const executionId = held.execution_id;
  const heldAt = performance.now();
  await waitFor(
    () => look(runtime, executionId, reads),
    (execution) => typeof execution?.task_token === 'string',
    10_000,
  );
  return { executionId, registeredMs: performance.now() - heldAt };
};

const spread = (label: string, values: readonly number[]) => [
  label,
  ms(median(values)),
  ms(Math.min(...values)),
  ms(Math.max(...values)),
];

export const decisionToSend = async (bed: Bed, plan: Plan, measured: Measured): Promise<Row[]> => {
  heading('Decision click → downstream call sent (console approve → the demo ERP receives the call)');
  const session = await signedIn(bed.runtime.baseUrl, approver.id, approver.password);
  const clickToSent: number[] = [];
  const clickToAnswer: number[] = [];
  const registered: number[] = [];
  for (let trial = 0; trial < plan.decisionTrials; trial += 1) {
    const { executionId, registeredMs } = await holdRegistered(bed);
    registered.push(registeredMs);
    const form = await session.decisionForm(executionId);
    // Armed before the click: resolves when the ERP has read the call's request headers.
    const arrival = bed.watch.arrival(executionId, 10_000);
    const clicked = performance.now();
    const answered = session
      .decide(executionId, form, 'approve')
      .then((answer) => ({ status: answer.status, at: performance.now() }));
    const sentAt = await arrival;
    const answer = await answered;
    if (answer.status !== 303) throw new Error(`the approve POST answered ${answer.status}`);
    clickToSent.push(sentAt - clicked);
    clickToAnswer.push(answer.at - clicked);
    const outcome = await outcomeOf(bed.runtime, executionId);
    if (outcome?.status !== 'succeeded') throw new Error(`an approved call ended ${outcome?.status}`);
    bed.erp.reset();
  }
  table([
    ['', 'median', 'min', 'max'],
    spread('click → the ERP receives the call', clickToSent),
    spread('click → the console answers (303)', clickToAnswer),
    spread('held reply → approval run registered', registered),
  ]);
  line(`${plan.decisionTrials} approvals by ${approver.id}, one after another`);
  const sentMedian = median(clickToSent);
  measured.handlerMs.register = median(registered);
  measured.handlerMs.decide = median(clickToAnswer);
  return [
    {
      what: 'decision click → downstream call sent, local',
      measured: `${ms(sentMedian, 1)} median, ${ms(Math.max(...clickToSent), 1)} max`,
      target: '≤ 200 ms',
      mark: within(sentMedian <= 200),
    },
  ];
};
