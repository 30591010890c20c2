// A file of policy cases (policy:test): each names an agent, a tool and arguments, and what the
// gateway is expected to decide. Read strictly, every problem reported at its line; the
// expectation's fields are named after the gateway's decision record (decision, reason, the
// human step, the determining policies), and what a staff approval asks beyond one approver after
// the annotations that ask it (quorum, escalate, reauth, acr), written as they write it.
import * as z from 'zod';
import { isJsonObject } from '../catalog/tool.js';
import { parseDurationMs } from '../config/duration.js';
import { readYaml } from '../config/yaml-lines.js';
import { maxQuorum } from './human-step.js';
import { listed, readEscalation } from './policy-set.js';

/** What a call gets, as the cases name it: run now, hold for people, or refused. */
const Verdict = z.enum(['run', 'hold', 'deny']);

/** Why a call is refused: the policy's reason, or a refusal before the policy (arguments, tool). */
export const RefusalReason = z.enum([
  'no_permit',
  'forbidden',
  'not_representable',
  'evaluation_error',
  'invalid_arguments',
  'unknown_tool',
]);
export type RefusalReason = z.infer<typeof RefusalReason>;

/** A value written as its annotation writes it, or `none` for a staff approval without it (null). */
const annotated = <T>(read: (text: string) => T | null, expected: string) =>
  z.string().transform((text, context): T | null => {
    if (text.trim() === 'none') return null;
    const value = read(text);
    if (value === null) context.addIssue({ code: 'custom', message: `expected ${expected}, or none` });
    return value;
  });

const positiveDuration = (text: string): number | null => {
  const ms = parseDurationMs(text);
  return ms !== null && ms > 0 ? ms : null;
};

const signInClasses = (text: string): string[] | null => {
  const values = listed(text);
  return values.length > 0 ? values : null;
};

const quorumExpected = `expected how many approvers, a whole number from 1 to ${maxQuorum}`;

const Expectation = z
  .object({
    decision: Verdict,
    /** Who must agree first: `none`, `customer`, a staff group, or both as a list ([customer, finance]). */
    approval: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    reason: RefusalReason.optional(),
    /** The policies that made the decision, by @id (or file:line), in any order. */
    policies: z.array(z.string().min(1)).optional(),
    /** How many distinct approvers the staff approval needs (@quorum; 1 without it). */
    quorum: z
      .number({ error: quorumExpected })
      .int(quorumExpected)
      .min(1, quorumExpected)
      .max(maxQuorum, quorumExpected)
      .optional(),
    /** Who else may decide, and after how long, as @escalate writes it ("4h, operations"), or none. */
    escalate: annotated(readEscalation, 'a time and a group, as @escalate writes them ("4h, operations")').optional(),
    /** How recent the approver's sign-in must be, as @reauth writes it ("5m"), or none. */
    reauth: annotated(positiveDuration, 'how recent the sign-in must be, as @reauth writes it ("5m")').optional(),
    /** The sign-in classes that may decide, in any order, as @acr writes them ("phr, phrh") or as a list, or none. */
    acr: z
      .preprocess(
        // A list reads as its values written one after another.
        (value) => (Array.isArray(value) && value.every((item) => typeof item === 'string') ? value.join(', ') : value),
        annotated(signInClasses, 'the sign-in classes, as @acr writes them ("phr, phrh")'),
      )
      .optional(),
  })
  .strict();

const PolicyCase = z
  .object({
    name: z.string().min(1),
    agent: z.string().min(1),
    tool: z.string().min(1),
    /** A mapping, read like arguments that arrive parsed; or a string of JSON text, read strictly like a request's text. */
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
    expect: Expectation,
  })
  .strict();

export interface PolicyCase extends z.infer<typeof PolicyCase> {
  /** The line the case starts at. */
  readonly line: number;
}

interface CaseFileProblem {
  readonly line: number | null;
  readonly message: string;
}

export type CaseFile =
  | { readonly ok: true; readonly cases: readonly PolicyCase[] }
  | { readonly ok: false; readonly problems: readonly CaseFileProblem[] };

/** Where a problem is, in words: the case (by number and name) and the field in it. */
const placeOf = (path: readonly PropertyKey[], data: unknown): string => {
  const [index, ...rest] = path;
  if (typeof index !== 'number') return '';
  const found: unknown = Array.isArray(data) ? data[index] : undefined;
  const name =
    typeof found === 'object' && found !== null && 'name' in found && typeof found.name === 'string'
      ? ` ("${found.name}")`
      : '';
  return `case ${index + 1}${name}${rest.length > 0 ? `, ${rest.map(String).join('.')}` : ''}: `;
};

/** The value at a path of the data read, or undefined when it is not there. */
const valueAt = (data: unknown, path: readonly PropertyKey[]): unknown => {
  let value = data;
  for (const key of path) {
    if (Array.isArray(value) && typeof key === 'number') value = value[key];
    else if (isJsonObject(value) && typeof key === 'string' && Object.hasOwn(value, key)) value = value[key];
    else return undefined;
  }
  return value;
};

const messageOf = (issue: z.core.$ZodIssue, data: unknown): string => {
  if (issue.path.length === 0) return 'a case file is a list of cases (- name: …, agent: …, tool: …, expect: …)';
  if (issue.code === 'unrecognized_keys')
    return `${placeOf(issue.path, data)}unknown field ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  if (issue.code !== 'custom' && valueAt(data, issue.path) === undefined) return `${placeOf(issue.path, data)}missing`;
  return `${placeOf(issue.path, data)}${issue.message}`;
};

/** Reads a case file: a YAML list of cases. */
export const readCaseFile = (text: string): CaseFile => {
  const read = readYaml(text);
  if (!read.ok) return { ok: false, problems: [...read.problems] };
  const data: unknown = read.data;
  const parsed = z.array(PolicyCase).min(1, 'the file holds no case').safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => ({
        line:
          issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined
            ? read.keyLineAt(issue.path, issue.keys[0])
            : read.nearestLineAt(issue.path),
        message: messageOf(issue, data),
      })),
    };
  }
  return {
    ok: true,
    cases: parsed.data.map((found, index) => ({ ...found, line: read.lineAt([index]) ?? 1 })),
  };
};
