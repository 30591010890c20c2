// A file of policy cases (policy:test): each names an agent, a tool and arguments, and what the
// gateway is expected to decide. Read strictly, every problem reported at its line; the
// expectation's fields are named after the gateway's decision record (decision, reason, the
// human step, the determining policies).
import * as z from 'zod';
import { isJsonObject } from '../catalog/tool.js';
import { readYaml } from '../config/yaml-lines.js';

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

const Expectation = z
  .object({
    decision: Verdict,
    /** Who must agree first: `none`, `customer`, a staff group, or both as a list ([customer, finance]). */
    approval: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    reason: RefusalReason.optional(),
    /** The policies that made the decision, by @id (or file:line), in any order. */
    policies: z.array(z.string().min(1)).optional(),
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
