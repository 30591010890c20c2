// `npm run executions -- --stats`: the approval load per group of approvers over a window, read
// from the listing by time (read-only): how many calls were held, how long a decision took (p50,
// p90), how many wait now and the share that expired. shared/executions/approval-load.ts decides
// which group a call counts for, as the metrics do.
import type { OpenedListing } from '../infra/local/listing-target.js';
import { timeLeft } from '../shared/edge/console/pages.js';
import { approvalLoadOf, type GroupLoad } from '../shared/executions/approval-load.js';
import type { Execution } from '../shared/executions/execution.js';
import { callsSince } from '../shared/executions/listing.js';
import { textTable } from './command-line.js';

/** Every held call made at or after `since`. */
const heldCallsSince = async (opened: OpenedListing, since: string): Promise<Execution[]> => {
  const held: Execution[] = [];
  for await (const execution of callsSince(opened.listing, since)) {
    if (execution.decision?.step != null) held.push(execution);
  }
  return held;
};

const columns = ['GROUP', 'HELD', 'DECIDED', 'P50', 'P90', 'PENDING', 'EXPIRED', 'EXPIRED SHARE'];

const rowOf = (load: GroupLoad): string[] => [
  load.group,
  String(load.held),
  String(load.decided),
  load.p50_ms === null ? '-' : timeLeft(load.p50_ms),
  load.p90_ms === null ? '-' : timeLeft(load.p90_ms),
  String(load.pending),
  String(load.expired),
  load.expired_share === null ? '-' : `${Math.round(load.expired_share * 1000) / 10}%`,
];

const tableOf = (loads: readonly GroupLoad[]): string => textTable([columns, ...loads.map(rowOf)]);

/** Prints the load per group of the calls held since `since`: a table, or one JSON object. */
export const printApprovalLoad = async (
  opened: OpenedListing,
  since: string,
  json: boolean,
  write: (text: string) => void,
): Promise<void> => {
  const groups = approvalLoadOf(await heldCallsSince(opened, since));
  if (json) {
    write(`${JSON.stringify({ since, groups })}\n`);
    return;
  }
  write(`Approval load in ${opened.source}, calls held since ${since}\n`);
  write(groups.length === 0 ? 'No held calls in the window.\n' : `${tableOf(groups)}\n`);
};
