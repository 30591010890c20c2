// One policy case (policy:test) rehearsed: its arguments read and put in canonical form and the
// policy's decision taken exactly as tools/call would (decideCall), with nothing sent or stored,
// then compared with what the case expects.
import { readArguments, readParsedArguments, type StrictArguments } from '../arguments/strict-json.js';
import { durationText } from '../config/duration.js';
import type { PolicyCase, RefusalReason } from '../policy/case-file.js';
import { type ExplainContext, explainOneTool, outcomeOf, type PolicyRef, stepWords } from '../policy/explain.js';
import type { Escalation, HumanStep } from '../policy/human-step.js';
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

const escalationWords = (escalation: Escalation | null): string =>
  escalation === null ? 'none' : `${durationText(escalation.after_ms)}, ${escalation.group}`;

const durationWords = (ms: number | null): string => (ms === null ? 'none' : durationText(ms));

const classesWords = (classes: readonly string[] | null): string => (classes === null ? 'none' : listWords(classes));

/** What the staff approval asks beyond one approver, against what the case expects of it; each difference in words. */
const staffRuleFailures = (expect: PolicyCase['expect'], step: HumanStep | null): string[] => {
  // A call that runs, is refused, or only waits for the customer asks none of them: one approver, nothing more.
  const staff = step !== null && step.staff !== null ? step : null;
  const got = {
    quorum: staff?.quorum ?? 1,
    escalation: staff?.escalation ?? null,
    reauth_ms: staff?.reauth_ms ?? null,
    acr: staff?.acr == null ? null : [...staff.acr].sort(),
  };
  const words = stepWords(step);
  const failures: string[] = [];
  if (expect.quorum !== undefined && expect.quorum !== got.quorum)
    failures.push(`expected quorum ${expect.quorum}, got ${got.quorum} (${words})`);
  if (expect.escalate !== undefined && escalationWords(expect.escalate) !== escalationWords(got.escalation))
    failures.push(
      `expected escalate ${escalationWords(expect.escalate)}, got ${escalationWords(got.escalation)} (${words})`,
    );
  if (expect.reauth !== undefined && expect.reauth !== got.reauth_ms)
    failures.push(`expected reauth ${durationWords(expect.reauth)}, got ${durationWords(got.reauth_ms)} (${words})`);
  const wantedClasses = expect.acr === undefined || expect.acr === null ? expect.acr : [...expect.acr].sort();
  if (wantedClasses !== undefined && classesWords(wantedClasses) !== classesWords(got.acr))
    failures.push(`expected acr ${classesWords(wantedClasses)}, got ${classesWords(got.acr)} (${words})`);
  return failures;
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
  failures.push(...staffRuleFailures(expect, got.step));
  return { ...base, got, failures };
};
