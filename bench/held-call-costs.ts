// What one held call costs in AWS terms, per outcome (approved, rejected, expired): the Step
// Functions state transitions its approval run enters, the store's writes and reads on the wire
// (the bench's own looks left out), and the size of its record at the end.
import { signedIn } from '../test/support/console.js';
import { approver, type Bed, portOf } from './bed.js';
import { type BenchReads, holdRegistered, outcomeOf, sleep, statesWhenDone } from './held-calls.js';
import type { Measured } from './measured.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { WireWatch } from './wire-watch.js';

interface HeldCallCost {
  readonly states: readonly string[];
  readonly writes: number;
  readonly reads: number;
  /** The call's record at the end (its JSON), bytes. */
  readonly itemBytes: number;
}

const recordBytes = (execution: unknown): number => Buffer.byteLength(JSON.stringify(execution));

/** One held call decided at the console, from the hold to the end of its approval run. */
const decidedCost = async (
  bed: Bed,
  session: Awaited<ReturnType<typeof signedIn>>,
  outcome: 'approve' | 'reject',
  ends: string,
): Promise<HeldCallCost> => {
  bed.watch.resetStore();
  const reads: BenchReads = { count: 0 };
  const { executionId } = await holdRegistered(bed, bed.runtime, reads);
  const { status } = await session.decide(executionId, await session.decisionForm(executionId), outcome);
  if (status !== 303) throw new Error(`the ${outcome} POST answered ${status}`);
  const final = await outcomeOf(bed.runtime, executionId, reads);
  if (final?.status !== ends) throw new Error(`a call decided ${outcome} ended ${final?.status}`);
  const states = await statesWhenDone(bed.runtime, executionId);
  await sleep(20);
  bed.erp.reset();
  return {
    states,
    writes: bed.watch.storeWrites(),
    reads: bed.watch.storeReads() - reads.count,
    itemBytes: recordBytes(final),
  };
};

/** One held call nobody decides. Expiry needs a short approval time: a second runtime, on a copy of the configuration. */
const expiredCost = async (bed: Bed): Promise<HeldCallCost> => {
  const expiring = await bed.startExpiringRuntime();
  const watch = new WireWatch(portOf(expiring.runtime.dynamodbEndpoint), null);
  try {
    const reads: BenchReads = { count: 0 };
    const { executionId } = await holdRegistered(bed, expiring.runtime, reads);
    const outcome = await outcomeOf(expiring.runtime, executionId, reads);
    if (outcome?.status !== 'expired') throw new Error(`an undecided call ended ${outcome?.status}`);
    const states = await statesWhenDone(expiring.runtime, executionId);
    await sleep(20);
    return {
      states,
      writes: watch.storeWrites(),
      reads: watch.storeReads() - reads.count,
      itemBytes: recordBytes(outcome),
    };
  } finally {
    watch.close();
    await expiring.stop();
  }
};

type Outcomes = readonly (readonly [string, readonly HeldCallCost[]])[];

/** The worst case of each outcome: transitions, writes, reads, the record's size. */
const worstOf = (outcomes: Outcomes) => {
  const worst = (costs: readonly HeldCallCost[], of: (cost: HeldCallCost) => number) =>
    costs.length === 0 ? Number.NaN : Math.max(...costs.map(of));
  return {
    transitions: outcomes.map(([, costs]) => worst(costs, (cost) => cost.states.length)),
    writes: outcomes.map(([, costs]) => worst(costs, (cost) => cost.writes)),
    reads: outcomes.map(([, costs]) => worst(costs, (cost) => cost.reads)),
    itemBytes: outcomes.map(([, costs]) => worst(costs, (cost) => cost.itemBytes)),
  };
};

const printCosts = (outcomes: Outcomes, worst: ReturnType<typeof worstOf>): void => {
  const { transitions, writes, reads, itemBytes } = worst;
  table([
    ['outcome', 'transitions', 'states entered', 'DynamoDB writes', 'reads', 'record', 'calls'],
    ...outcomes.map(([name, costs], index) => [
      name,
      String(transitions[index]),
      costs[0]?.states.join(' → ') ?? 'n/a',
      String(writes[index]),
      String(reads[index]),
      `${itemBytes[index]} B`,
      String(costs.length),
    ]),
  ]);
  line('worst case over the calls; writes over the whole life: hold, token and notice, decision, claim, outcome');
  line(
    "reads: the gateway's own (the console's, the approval run's), without the bench's looks at the record; " +
      "record: the call's item at the end, as JSON",
  );
};

export const heldCallCosts = async (bed: Bed, plan: Plan, measured: Measured): Promise<Row[]> => {
  heading('AWS cost of one held call: Step Functions state transitions and DynamoDB writes, per outcome');
  const session = await signedIn(bed.runtime.baseUrl, approver.id, approver.password);
  const approved: HeldCallCost[] = [];
  const rejected: HeldCallCost[] = [];
  for (let trial = 0; trial < plan.outcomeTrials; trial += 1) {
    approved.push(await decidedCost(bed, session, 'approve', 'succeeded'));
    rejected.push(await decidedCost(bed, session, 'reject', 'rejected'));
  }
  const expired: HeldCallCost[] = [await expiredCost(bed)];
  const outcomes = [
    ['approved', approved],
    ['rejected', rejected],
    ['expired (1 s approval time)', expired],
  ] as const;
  const worst = worstOf(outcomes);
  printCosts(outcomes, worst);
  const { transitions, writes, reads, itemBytes } = worst;
  const use = (index: number) => ({
    writes: writes[index] ?? Number.NaN,
    reads: reads[index] ?? Number.NaN,
    itemBytes: itemBytes[index] ?? Number.NaN,
  });
  measured.store.heldApproved = use(0);
  measured.store.heldExpired = use(2);
  measured.transitions.approved = transitions[0];
  measured.transitions.expired = transitions[2];
  return [
    {
      what: 'Step Functions transitions per held call (approve / reject / expire)',
      measured: transitions.join(' / '),
      target: '≤ 5',
      mark: within(transitions.every((count) => count <= 5)),
    },
    {
      what: 'DynamoDB writes per held call (approve / reject / expire)',
      measured: writes.join(' / '),
      target: 'reported',
      mark: 'info',
    },
  ];
};
