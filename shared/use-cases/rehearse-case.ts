// One policy case (policy:test) rehearsed: its arguments read and put in canonical form and the
// policy's decision taken exactly as tools/call would (decideCall), with nothing sent or stored,
// then compared with what the case expects.
import { readArguments, readParsedArguments, type StrictArguments } from '../arguments/strict-json.js';
import type { PolicyCase, RefusalReason } from '../policy/case-file.js';
import type { HumanStep } from '../policy/engine.js';
import { type ExplainContext, explainOneTool, outcomeOf, type PolicyRef, stepWords } from '../policy/explain.js';
import type { InputError } from '../result.js';
import { decideCall } from './decide-call.js';

interface Rehearsed {
  readonly decision: 'run' | 'hold' | 'deny';
  readonly reason: RefusalReason | null;
  readonly step: HumanStep | null;
  /** The decision and its human step, in words (for a hidden tool: why it is hidden). */
  readonly words: string;
  readonly policies: readonly PolicyRef[];
  readonly input_errors: readonly InputError[] | null;
}

export interface CaseResult {
  readonly name: string;
  readonly line: number;
  readonly agent: string;
  readonly tool: string;
  /** What the gateway would decide; null when the case cannot be rehearsed (an unknown agent). */
  readonly got: Rehearsed | null;
  /** Each way the expectation does not hold, in words; empty when the case passes. */
  readonly failures: readonly string[];
}

/** The parties of a human step, as the cases name them: `customer` and the staff group. */
const partiesOf = (step: HumanStep | null): string[] =>
  step === null ? [] : [...(step.customer ? ['customer'] : []), ...(step.staff === null ? [] : [step.staff])];

const expectedParties = (approval: string | readonly string[]): string[] =>
  (typeof approval === 'string' ? (approval === 'none' ? [] : [approval]) : [...approval]).sort();

const partiesWords = (parties: readonly string[]): string => (parties.length === 0 ? 'none' : parties.join(' and '));

const listWords = (names: readonly string[]): string => `[${names.join(', ')}]`;

const argumentsOf = (given: PolicyCase['arguments']): StrictArguments | string => {
  if (typeof given !== 'string') return readParsedArguments(given ?? {});
  return readArguments(given, []) ?? 'arguments: the text is not JSON';
};

const rehearse = (context: ExplainContext, testCase: PolicyCase): Rehearsed | string => {
  const configured = context.snapshot.config.agents.find((agent) => agent.id === testCase.agent);
  if (configured === undefined) {
    const known = context.snapshot.config.agents.map((agent) => agent.id).join(', ');
    return `agent "${testCase.agent}" is not in the configuration (its agents: ${known.length > 0 ? known : 'none'})`;
  }
  const agent = { id: configured.id, groups: configured.groups, customerId: configured.customer };
  const args = argumentsOf(testCase.arguments);
  if (typeof args === 'string') return args;
  const decided = decideCall(context.snapshot, agent, testCase.tool, args);
  const refused = { decision: 'deny', step: null, policies: [], input_errors: null } as const;
  switch (decided.kind) {
    case 'unknown_tool': {
      const explained = explainOneTool(context, agent, testCase.tool);
      const why =
        explained.kind === 'unknown'
          ? 'the configuration has no such tool'
          : explained.kind === 'undiscovered'
            ? explained.summary
            : `hidden from this agent: ${explained.tool.summary}`;
      return { ...refused, reason: 'unknown_tool', words: `refused as an unknown tool: ${why}` };
    }
    case 'invalid_arguments':
      return {
        ...refused,
        reason: 'invalid_arguments',
        words: 'refused: the arguments are not valid',
        input_errors: decided.errors,
      };
    case 'decided': {
      const outcome = outcomeOf(context, decided.decision);
      return {
        decision: outcome.decision,
        reason: outcome.reason,
        step: outcome.step,
        words: outcome.words,
        policies: outcome.policies,
        input_errors: null,
      };
    }
  }
};

export const rehearseCase = (context: ExplainContext, testCase: PolicyCase): CaseResult => {
  const base = { name: testCase.name, line: testCase.line, agent: testCase.agent, tool: testCase.tool };
  const got = rehearse(context, testCase);
  if (typeof got === 'string') return { ...base, got: null, failures: [got] };
  const { expect } = testCase;
  const failures: string[] = [];
  if (expect.decision !== got.decision) failures.push(`expected decision ${expect.decision}, got ${got.decision}`);
  if (expect.approval !== undefined) {
    const [wanted, given] = [expectedParties(expect.approval), partiesOf(got.step).sort()];
    if (wanted.join('\0') !== given.join('\0'))
      failures.push(`expected approval ${partiesWords(wanted)}, got ${partiesWords(given)} (${stepWords(got.step)})`);
  }
  if (expect.reason !== undefined && expect.reason !== got.reason)
    failures.push(`expected reason ${expect.reason}, got ${got.reason ?? 'none'}`);
  if (expect.policies !== undefined) {
    const wanted = [...expect.policies].sort();
    const given = got.policies.map((policy) => policy.name).sort();
    if (wanted.join('\0') !== given.join('\0'))
      failures.push(`expected policies ${listWords(wanted)}, got ${listWords(given)}`);
  }
  return { ...base, got, failures };
};
