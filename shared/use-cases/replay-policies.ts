// policy:replay: the calls recorded over a window decided again, by the configuration's policies and
// by a proposed set compiled against the same catalog, so an operator sees what a policy change
// would do to real traffic before it ships. It only reads: a call whose decision would read a
// secret value is counted as not replayable, never opened and never guessed.
import { type Catalog, isJsonObject, type JsonObject, type ToolWithValidator } from '../catalog/tool.js';
import type { Execution } from '../executions/execution.js';
import { type ExecutionListing, maxListingLimit } from '../executions/listing.js';
import { parseJsonPointer } from '../json-pointer.js';
import type { HumanStep, PolicyDecision, PolicyEngine } from '../policy/engine.js';
import { parseExactJson } from '../wire/exact-json.js';
import { requesterOf } from './run-once.js';

/** How a call's decision moves from the current policies to the proposed ones. */
export const replayMoves = ['run_to_held', 'held_to_run', 'to_denied', 'from_denied', 'held_step_changed'] as const;
export type ReplayMove = (typeof replayMoves)[number];

/**
 * Why a recorded call is not decided again: a policy would read one of its secret values (or its
 * secrets' places were not kept), its tool is no longer in the catalog, or it was refused before
 * the policy saw any arguments.
 */
export const notReplayableReasons = ['secret', 'unknown_tool', 'no_arguments'] as const;
export type NotReplayable = (typeof notReplayableReasons)[number];

/** Execution ids kept per count, as examples to look up with `npm run executions`. */
const maxReplayExamples = 3;

/** How many calls, and the first few of their execution ids (newest first). */
export interface Counted {
  readonly count: number;
  readonly examples: readonly string[];
}

export interface ToolReplay {
  readonly tool: string;
  /** Calls of this tool decided again. */
  readonly replayed: number;
  readonly unchanged: number;
  readonly moves: Readonly<Record<ReplayMove, Counted>>;
}

/** Held calls a staff group decides over the window, and per day: by today's policies and the proposed ones. */
export interface GroupLoad {
  readonly group: string;
  readonly today: number;
  readonly proposed: number;
  readonly today_per_day: number;
  readonly proposed_per_day: number;
}

export interface ReplayReport {
  readonly since: string;
  readonly until: string;
  /** The window's length in days (per-day loads divide by it). */
  readonly days: number;
  /** Calls recorded in the window. */
  readonly read: number;
  readonly replayed: number;
  readonly unchanged: number;
  readonly moves: Readonly<Record<ReplayMove, Counted>>;
  readonly not_replayable: Readonly<Record<NotReplayable, Counted>>;
  /** Each tool with a call decided again, by name. */
  readonly tools: readonly ToolReplay[];
  readonly approval_load: readonly GroupLoad[];
}

/** The catalog both sets were compiled against, and the two sets. */
export interface ReplaySets {
  readonly catalog: Catalog;
  readonly current: PolicyEngine;
  readonly proposed: PolicyEngine;
}

export interface ReplayWindow {
  /** The first instant replayed (ISO). */
  readonly since: string;
  /** Now (epoch ms): the window's end. */
  readonly now: number;
}

/** A count that keeps its first examples. */
class Tally {
  count = 0;
  readonly examples: string[] = [];
  add(executionId: string): void {
    this.count += 1;
    if (this.examples.length < maxReplayExamples) this.examples.push(executionId);
  }
  get counted(): Counted {
    return { count: this.count, examples: [...this.examples] };
  }
}

const moveTallies = (): Record<ReplayMove, Tally> => ({
  run_to_held: new Tally(),
  held_to_run: new Tally(),
  to_denied: new Tally(),
  from_denied: new Tally(),
  held_step_changed: new Tally(),
});

const movesCounted = (moves: Record<ReplayMove, Tally>): Record<ReplayMove, Counted> => ({
  run_to_held: moves.run_to_held.counted,
  held_to_run: moves.held_to_run.counted,
  to_denied: moves.to_denied.counted,
  from_denied: moves.from_denied.counted,
  held_step_changed: moves.held_step_changed.counted,
});

/** The argument fields the sets read (a secret in one of them is read); 'all' when a set reads them whole. */
const fieldsReadBy = (sets: ReplaySets): ReadonlySet<string> | 'all' => {
  const read = [sets.current.checked.argumentsRead, sets.proposed.checked.argumentsRead];
  return read.some((fields) => fields === 'all') ? 'all' : new Set(read.flatMap((fields) => [...fields]));
};

/**
 * Whether a decision would read one of the call's secret values: a policy reads the top-level field
 * it sits in. A record that holds sealed values but not where they are counts as read.
 */
const readsSecret = (execution: Execution, read: ReadonlySet<string> | 'all'): boolean => {
  const pointers = execution.secret_pointers;
  if (pointers === null) return execution.sealed_arguments !== null;
  return pointers.some((pointer) => {
    const field = parseJsonPointer(pointer)?.[0];
    return read === 'all' || field === undefined || read.has(field);
  });
};

type Replayable =
  | { readonly kind: 'replay'; readonly tool: ToolWithValidator; readonly args: JsonObject }
  | { readonly kind: 'not_replayable'; readonly reason: NotReplayable };

/** The recorded arguments to decide again, or why the call is counted apart. */
const replayableOf = (execution: Execution, sets: ReplaySets, read: ReadonlySet<string> | 'all'): Replayable => {
  if (execution.arguments_json === null) return { kind: 'not_replayable', reason: 'no_arguments' };
  const tool = sets.catalog.byName.get(execution.tool);
  if (tool === undefined) return { kind: 'not_replayable', reason: 'unknown_tool' };
  if (readsSecret(execution, read)) return { kind: 'not_replayable', reason: 'secret' };
  const args = parseExactJson(execution.arguments_json);
  return isJsonObject(args) ? { kind: 'replay', tool, args } : { kind: 'not_replayable', reason: 'no_arguments' };
};

type Verdict = 'run' | 'held' | 'denied';

const verdictOf = (decision: PolicyDecision): Verdict =>
  decision.kind === 'deny' ? 'denied' : decision.step === null ? 'run' : 'held';

/** The human step a decision asks for (null when it runs at once or is denied). */
const stepOf = (decision: PolicyDecision): HumanStep | null => (decision.kind === 'allow' ? decision.step : null);

/** How the decision moves, or null when the call would be decided the same way. */
const moveOf = (today: PolicyDecision, proposed: PolicyDecision): ReplayMove | null => {
  const [before, after] = [verdictOf(today), verdictOf(proposed)];
  if (after === 'denied') return before === 'denied' ? null : 'to_denied';
  if (before === 'denied') return 'from_denied';
  if (before === 'run') return after === 'held' ? 'run_to_held' : null;
  if (after === 'run') return 'held_to_run';
  // Both held: the same group, customer step, quorum, escalation and sign-in rules, or another step.
  return JSON.stringify(stepOf(today)) === JSON.stringify(stepOf(proposed)) ? null : 'held_step_changed';
};

/** One tool's counts while the calls are read. */
interface ToolTally {
  replayed: number;
  unchanged: number;
  readonly moves: Record<ReplayMove, Tally>;
}

/** Everything counted so far. */
class ReplayTally {
  read = 0;
  readonly notReplayable: Record<NotReplayable, Tally> = {
    secret: new Tally(),
    unknown_tool: new Tally(),
    no_arguments: new Tally(),
  };
  readonly moves = moveTallies();
  readonly tools = new Map<string, ToolTally>();
  /** Held calls per staff group: by today's policies, by the proposed ones. */
  readonly load = new Map<string, { today: number; proposed: number }>();

  toolOf(name: string): ToolTally {
    const found = this.tools.get(name) ?? { replayed: 0, unchanged: 0, moves: moveTallies() };
    this.tools.set(name, found);
    return found;
  }

  held(decision: PolicyDecision, side: 'today' | 'proposed'): void {
    const group = decision.kind === 'allow' ? (decision.step?.staff ?? null) : null;
    if (group === null) return;
    const load = this.load.get(group) ?? { today: 0, proposed: 0 };
    load[side] += 1;
    this.load.set(group, load);
  }
}

/** Decides one recorded call by both sets and counts how it moves. */
const replayOne = (execution: Execution, sets: ReplaySets, read: ReadonlySet<string> | 'all', tally: ReplayTally) => {
  tally.read += 1;
  const replayable = replayableOf(execution, sets, read);
  if (replayable.kind === 'not_replayable') return tally.notReplayable[replayable.reason].add(execution.execution_id);
  const { tool, args } = replayable;
  const agent = requesterOf(execution);
  const today = sets.current.decide(agent, tool, args);
  const proposed = sets.proposed.decide(agent, tool, args);
  // A hidden value no policy reads still stands in the record as "[REDACTED]": when that text
  // cannot be held by the policy's types, the decision cannot be made without the secret.
  const secretInTheWay = (execution.secret_pointers?.length ?? 0) > 0 && [today, proposed].some(notRepresentable);
  if (secretInTheWay) return tally.notReplayable.secret.add(execution.execution_id);
  const counts = tally.toolOf(execution.tool);
  counts.replayed += 1;
  tally.held(today, 'today');
  tally.held(proposed, 'proposed');
  const move = moveOf(today, proposed);
  if (move === null) {
    counts.unchanged += 1;
    return;
  }
  counts.moves[move].add(execution.execution_id);
  tally.moves[move].add(execution.execution_id);
};

const notRepresentable = (decision: PolicyDecision): boolean =>
  decision.kind === 'deny' && decision.reason === 'not_representable';

const perDay = (count: number, days: number): number => Math.round((count / days) * 100) / 100;

const dayMs = 86_400_000;

const reportOf = (tally: ReplayTally, window: ReplayWindow): ReplayReport => {
  const days = Math.max(window.now - Date.parse(window.since), 1) / dayMs;
  const tools = [...tally.tools.entries()]
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([tool, counts]) => ({
      tool,
      replayed: counts.replayed,
      unchanged: counts.unchanged,
      moves: movesCounted(counts.moves),
    }));
  const approvalLoad = [...tally.load.entries()]
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([group, load]) => ({
      group,
      ...load,
      today_per_day: perDay(load.today, days),
      proposed_per_day: perDay(load.proposed, days),
    }));
  return {
    since: window.since,
    until: new Date(window.now).toISOString(),
    days: Math.round(days * 100) / 100,
    read: tally.read,
    replayed: tools.reduce((sum, tool) => sum + tool.replayed, 0),
    unchanged: tools.reduce((sum, tool) => sum + tool.unchanged, 0),
    moves: movesCounted(tally.moves),
    not_replayable: {
      secret: tally.notReplayable.secret.counted,
      unknown_tool: tally.notReplayable.unknown_tool.counted,
      no_arguments: tally.notReplayable.no_arguments.counted,
    },
    tools,
    approval_load: approvalLoad,
  };
};

/** Every call recorded since the window's start, page after page, deciding each by both sets. */
export const replayPolicies = async (
  listing: ExecutionListing,
  sets: ReplaySets,
  window: ReplayWindow,
): Promise<ReplayReport> => {
  const read = fieldsReadBy(sets);
  const tally = new ReplayTally();
  let cursor: string | undefined;
  do {
    const page = await listing.list({
      since: window.since,
      limit: maxListingLimit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const execution of page.items) replayOne(execution, sets, read, tally);
    cursor = page.next;
  } while (cursor !== undefined);
  return reportOf(tally, window);
};
