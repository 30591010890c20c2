// What `npm run policy:replay` prints: per tool the calls whose decision would move, with example
// execution ids, the totals, the calls counted apart, and each staff group's approval load per day.
import {
  type Counted,
  type GroupLoad,
  type NotReplayable,
  notReplayableReasons,
  type ReplayMove,
  type ReplayReport,
  replayMoves,
  type ToolReplay,
} from '../shared/use-cases/replay-report.js';

const moveWords: Readonly<Record<ReplayMove, string>> = {
  run_to_held: 'run → held',
  held_to_run: 'held → run',
  to_denied: '→ denied',
  from_denied: 'denied → allowed',
  held_step_changed: 'held, another step',
};

const apartWords: Readonly<Record<NotReplayable, string>> = {
  secret: 'a policy would read a secret value',
  unknown_tool: 'the tool is no longer in the catalog',
  no_arguments: 'refused before the policy (no arguments)',
};

const width = Math.max(...Object.values(moveWords).map((words) => words.length));

const countedLine = (words: string, counted: Counted, pad = width): string =>
  `    ${words.padEnd(pad)}  ${String(counted.count).padStart(5)}${counted.examples.length > 0 ? `  e.g. ${counted.examples.join(', ')}` : ''}`;

const movesLines = (moves: Readonly<Record<ReplayMove, Counted>>, all: boolean): string[] =>
  replayMoves.flatMap((move) => (all || moves[move].count > 0 ? [countedLine(moveWords[move], moves[move])] : []));

const toolLines = (tool: ToolReplay): string[] => [
  `  ${tool.tool}: ${tool.replayed} decided again, ${tool.unchanged} unchanged`,
  ...movesLines(tool.moves, false),
];

const loadLines = (loads: readonly GroupLoad[]): string[] => {
  if (loads.length === 0) return ['  no call is held for staff, today or proposed'];
  const groupWidth = Math.max(5, ...loads.map((load) => load.group.length));
  return [
    `  ${'GROUP'.padEnd(groupWidth)}  ${'TODAY'.padStart(8)}  ${'PROPOSED'.padStart(8)}`,
    ...loads.map(
      (load) =>
        `  ${load.group.padEnd(groupWidth)}  ${String(load.today_per_day).padStart(8)}  ${String(load.proposed_per_day).padStart(8)}`,
    ),
  ];
};

/** The report as text, headed by where the calls were read and what was compared. */
export const replayLines = (report: ReplayReport, heading: string): string[] => {
  const apart = Object.values(report.not_replayable).reduce((sum, counted) => sum + counted.count, 0);
  const changed = report.tools.filter((tool) => tool.unchanged < tool.replayed);
  const apartWidth = Math.max(...Object.values(apartWords).map((words) => words.length));
  return [
    heading,
    `  from ${report.since} to ${report.until} (${report.days} days): ${report.read} calls recorded, ${report.replayed} decided again (${report.unchanged} unchanged), ${apart} not replayable`,
    '',
    changed.length > 0 ? 'Calls whose decision would change, by tool:' : 'No decision would change.',
    ...changed.flatMap(toolLines),
    '',
    'Totals:',
    ...movesLines(report.moves, true),
    '',
    'Not replayable (counted apart, never decided):',
    ...notReplayableReasons.map((reason) => countedLine(apartWords[reason], report.not_replayable[reason], apartWidth)),
    '',
    'Approval load (held calls per day, by the staff group that decides):',
    ...loadLines(report.approval_load),
  ];
};
