// `npm run bench [-- --quick] [--only own-cost,held-reply]`: the project's performance figures,
// measured side by side in one run, on loopback. Latency figures come from interleaved rounds
// against reference servers in this same process (a busy machine slows them all alike), as medians
// of round medians with pooled p99; throughput from rotated rounds at fixed concurrency; the rest
// from the approval run's own record, the store's wire, fresh processes (the bundles' import, the
// MCP function's first call), the local runtime in a process of its own under steady load (its
// resident memory and what its JavaScript keeps), and the synthesized stack priced with this run's
// figures (the AWS cost table, also printed as Markdown at the end). Each section prints as it
// ends, then a summary row per figure with its target. It reports and does not judge: missed
// targets still end with exit code 0; 1 means a section could not be measured at all, 2 that
// --only named a section there is not.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { bundleBudget } from '../infra/bundling/budgets.js';
import { errorText, stackText } from '../shared/errors.js';
import { awsCosts } from './aws-costs.js';
import { type Bed, startBed } from './bed.js';
import { importFloorWhat, importWhat, lambdaBundles } from './bundles.js';
import {
  ownCost,
  ownCostFloorWhat,
  ownCostTarget,
  ownCostWhat,
  ownCpuWhat,
  storeRequests,
  throughput,
  throughputFloorWhat,
  throughputTarget,
  throughputWhat,
} from './direct-calls.js';
import { fairness, fairnessTarget, fairnessWhat } from './fairness.js';
import { firstCall, firstCallFloorWhat, firstCallWhat } from './first-call.js';
import { targetText } from './floor-ratios.js';
import { heldCallCosts } from './held-call-costs.js';
import { decisionToSend, heldFloorWhat, heldReply, heldReplyTarget, heldReplyWhat } from './held-calls.js';
import { heldPathWhat } from './held-path.js';
import { type Measured, nothingMeasured } from './measured.js';
import { memoryUnderLoad } from './memory-load.js';
import { type Plan, plans } from './plan.js';
import { heading, line, type Row, summary } from './report.js';

/** The summary's order: the rows of the performance table (bench/README.md). */
const summaryOrder = [
  'own-cost',
  'throughput',
  'held-reply',
  'fairness',
  'decision',
  'bundles',
  'first-call',
  'memory',
  'held-cost',
  'store',
  'aws-cost',
] as const;
type SectionKey = (typeof summaryOrder)[number];

/** What a section's summary rows say when it could not run. */
const expected: Record<SectionKey, readonly { what: string; target: string }[]> = {
  'own-cost': [
    { what: ownCostWhat, target: targetText(ownCostTarget) },
    { what: ownCostFloorWhat, target: 'floor' },
    { what: ownCpuWhat, target: 'reported' },
  ],
  throughput: [
    { what: throughputWhat(plans.full.connections), target: targetText(throughputTarget) },
    { what: throughputFloorWhat(plans.full.connections), target: 'floor' },
  ],
  'held-reply': [
    { what: heldReplyWhat, target: targetText(heldReplyTarget) },
    { what: heldFloorWhat, target: 'floor' },
    { what: heldPathWhat, target: 'reported' },
  ],
  fairness: [{ what: fairnessWhat, target: fairnessTarget }],
  decision: [{ what: 'decision click → downstream call sent, local', target: '≤ 200 ms' }],
  bundles: [
    { what: importFloorWhat, target: 'floor' },
    { what: 'Lambda bundle per function, code loaded at cold start', target: '≤ 650 KB' },
    { what: importWhat, target: `≤ ${bundleBudget.importOverFloor}×` },
  ],
  'first-call': [
    { what: firstCallFloorWhat, target: 'floor' },
    { what: firstCallWhat, target: `≤ ${bundleBudget.firstCallOverFloor}×` },
  ],
  memory: [
    {
      what: "memory the local runtime's JavaScript keeps under steady load",
      target: 'flat (growth per 10 000 calls ≤ 1 MB after warm-up)',
    },
    {
      what: '  resident memory (VmRSS), the embedded store included',
      target: "reported (LevelDB's native memory grows with the data kept)",
    },
  ],
  'held-cost': [{ what: 'Step Functions transitions per held call (approve / reject / expire)', target: '≤ 5' }],
  store: [{ what: 'DynamoDB writes per direct call', target: '≤ 2' }],
  'aws-cost': [
    {
      what: 'AWS cost per million calls (direct read / write, held approved / followed as a task / expired)',
      target: 'reported',
    },
  ],
};

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** The plan and the sections `--quick` and `--only` choose; null when --only names one there is not. */
const chosen = (): { plan: Plan; selected: (key: SectionKey) => boolean } | null => {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
    strict: true,
  });
  const plan = values.quick ? plans.quick : plans.full;
  // --only: the named sections alone (the cost table needs the held-call sections' figures too).
  const only = values.only === undefined ? null : new Set(values.only.split(',').map((key) => key.trim()));
  const unknown = [...(only ?? [])].filter((key) => !(summaryOrder as readonly string[]).includes(key));
  if (unknown.length > 0) {
    process.stderr.write(`--only takes sections among ${summaryOrder.join(', ')}; not: ${unknown.join(', ')}\n`);
    return null;
  }
  return { plan, selected: (key) => only === null || only.has(key) };
};

/** The sections as they run: each one's rows, or a line saying it could not be measured. */
const sectionRunner = (selected: (key: SectionKey) => boolean) => {
  const rows = new Map<SectionKey, readonly Row[]>();
  let complete = true;
  const measure = async (key: SectionKey, section: () => Promise<Row[]>): Promise<void> => {
    if (!selected(key)) return;
    const sectionStarted = performance.now();
    try {
      rows.set(key, await section());
      line(`(${seconds(sectionStarted)})`);
    } catch (error) {
      complete = false;
      line(`!! not measured: ${errorText(error)}`);
    }
  };
  return {
    rows,
    measure,
    failed: () => {
      complete = false;
    },
    complete: () => complete,
  };
};
type Sections = ReturnType<typeof sectionRunner>;

/** The sections on the bench bed (the demo ERP, the local runtime, the reference servers), in order. */
const bedSections = async (sections: Sections, plan: Plan, measured: Measured, started: number): Promise<void> => {
  const { measure } = sections;
  let bed: Bed | undefined;
  try {
    process.stdout.write('Starting the demo ERP, the local runtime and the reference servers...\n');
    bed = await startBed();
    line(`ready after ${seconds(started)}`);
    const ready = bed;
    await measure('own-cost', () => ownCost(ready, plan));
    await measure('throughput', () => throughput(ready, plan));
    await measure('store', () => storeRequests(ready, plan, measured));
    await measure('held-reply', () => heldReply(ready, plan, measured));
    await measure('decision', () => decisionToSend(ready, plan, measured));
    await measure('held-cost', () => heldCallCosts(ready, plan, measured));
    await measure('fairness', () => fairness(ready, plan));
  } catch (error) {
    sections.failed();
    line(`!! the bench bed did not start: ${errorText(error)}`);
  } finally {
    await bed?.close();
  }
};

/** A summary row per figure, a section that could not run said as such; the cost table as Markdown. */
const printSummary = (
  rows: ReadonlyMap<SectionKey, readonly Row[]>,
  selected: (key: SectionKey) => boolean,
  costMarkdown: string | undefined,
): void => {
  summary(
    summaryOrder
      .filter(selected)
      .flatMap(
        (key): readonly Row[] =>
          rows.get(key) ??
          expected[key].map((row) => ({ what: row.what, measured: '-', target: row.target, mark: 'not measured' })),
      ),
  );
  if (costMarkdown !== undefined) {
    heading(`AWS cost per million calls, as Markdown (for the README)`);
    process.stdout.write(`\n${costMarkdown}\n`);
  }
};

const main = async (): Promise<number> => {
  const choice = chosen();
  if (choice === null) return 2;
  const { plan, selected } = choice;
  const needsBed = summaryOrder.some(
    (key) => selected(key) && !['bundles', 'first-call', 'memory', 'aws-cost'].includes(key),
  );
  // A run that stops making progress still ends, and says so.
  setTimeout(() => {
    process.stdout.write(`\nThe benchmark did not end within ${plan.watchdogMs / 1000} s; stopping it.\n`);
    process.exit(1);
  }, plan.watchdogMs).unref();

  const started = performance.now();
  process.stdout.write(`Approval Gateway benchmark, ${plan.name} run, loopback only\n`);
  const sections = sectionRunner(selected);
  const { measure } = sections;
  // What the sections measure for the cost section at the end.
  const measured = nothingMeasured();
  if (needsBed) await bedSections(sections, plan, measured, started);
  // Bundles last, with every server stopped: the fresh processes compete with nothing of ours.
  await measure('bundles', () => lambdaBundles(plan));
  await measure('first-call', () => firstCall(plan, measured));
  // The gateway under steady load runs in a process of its own, with nothing else of ours running.
  await measure('memory', () => memoryUnderLoad(plan));
  let costMarkdown: string | undefined;
  await measure('aws-cost', async () => {
    const costs = await awsCosts(measured);
    costMarkdown = costs.markdown;
    return costs.rows;
  });
  printSummary(sections.rows, selected, costMarkdown);
  process.stdout.write(`\nWall time ${seconds(started)}.\n`);
  return sections.complete() ? 0 : 1;
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${stackText(error)}\n`);
    process.exit(1);
  },
);
