// What policy:replay reports, counted as the calls are read: how each call's decision would move
// (per tool and in total, with the first execution ids as examples), the calls counted apart, and
// each staff group's held calls per day by today's policies and by the proposed ones.
import type { PolicyDecision } from '../policy/engine.js';

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

/** One tool's counts while the calls are read. */
interface ToolTally {
  replayed: number;
  unchanged: number;
  readonly moves: Record<ReplayMove, Tally>;
}

/** Everything counted so far, while the calls are read. */
export class ReplayTally {
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

const perDay = (count: number, days: number): number => Math.round((count / days) * 100) / 100;

const dayMs = 86_400_000;

export const reportOf = (tally: ReplayTally, window: ReplayWindow): ReplayReport => {
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
