// The organization's Cedar policies, read from the configuration's policy files, checked by
// Cedar's own parser and validator against the generated schema, with every problem reported at
// its file and line. The human-step annotations are checked here too.

import type { DetailedError, SchemaJson } from '@cedar-policy/cedar-wasm/nodejs';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';

export interface PolicyFile {
  readonly path: string;
  readonly text: string;
}

export type Effect = 'permit' | 'forbid';
export type Approval = 'staff' | 'customer';

/** One policy, as the gateway reports it (never its text). */
export interface PolicyInfo {
  /** Cedar's id in the set (policy0, policy1, … in file order). */
  readonly id: string;
  /** The policy's @id annotation, or file:line. */
  readonly name: string;
  readonly file: string;
  readonly line: number;
  readonly effect: Effect;
  /** Parties that must agree before a call it permits runs (empty: it runs at once). */
  readonly approvals: readonly Approval[];
  /** Staff group that decides, for a staff approval. */
  readonly approvers: string | null;
}

export interface PolicyProblem {
  readonly file: string;
  readonly line: number | null;
  readonly message: string;
}

export interface CompiledPolicies {
  /** Cedar's id for the pre-parsed set. */
  readonly setId: string;
  readonly text: string;
  readonly policies: ReadonlyMap<string, PolicyInfo>;
}

export type PolicyCompilation = { ok: true; policies: CompiledPolicies } | { ok: false; problems: PolicyProblem[] };

const separator = '\n';

interface Layout {
  readonly text: string;
  /** Where each file starts in the joined text. */
  readonly starts: readonly { file: PolicyFile; offset: number }[];
}

const layoutOf = (files: readonly PolicyFile[]): Layout => {
  let offset = 0;
  const starts = files.map((file) => {
    const start = { file, offset };
    offset += file.text.length + separator.length;
    return start;
  });
  return { text: files.map((file) => file.text).join(separator), starts };
};

/** The file and line of an offset in the joined text. */
const locate = (layout: Layout, offset: number): { file: string; line: number } => {
  const start = [...layout.starts].reverse().find((candidate) => candidate.offset <= offset) ?? layout.starts[0];
  if (start === undefined) return { file: '', line: 1 };
  const before = start.file.text.slice(0, Math.max(0, offset - start.offset));
  return { file: start.file.path, line: before.split('\n').length };
};

const problemsOf = (layout: Layout, errors: readonly DetailedError[], fallback: string): PolicyProblem[] =>
  errors.map((error) => {
    const offset = error.sourceLocations?.[0]?.start;
    const where = offset === undefined ? { file: fallback, line: null } : locate(layout, offset);
    const label = error.sourceLocations?.[0]?.label;
    return { ...where, message: `${error.message}${label ? ` (${label})` : ''}` };
  });

const approvalsOf = (value: string | undefined): Approval[] | string => {
  if (value === undefined) return [];
  const parts = value
    .split(/[\s,+]+/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  const approvals: Approval[] = [];
  for (const part of parts) {
    if (part !== 'staff' && part !== 'customer') {
      return `@approval("${value}") names "${part}"; expected "staff", "customer" or both ("staff, customer")`;
    }
    if (!approvals.includes(part)) approvals.push(part);
  }
  if (approvals.length === 0) return `@approval("${value}") names nobody; expected "staff", "customer" or both`;
  return approvals.sort();
};

let compiledSets = 0;

export const compilePolicies = (
  files: readonly PolicyFile[],
  schema: SchemaJson<string>,
  /** Names the pre-parsed set (e.g. the configuration version). */
  label: string,
): PolicyCompilation => {
  const layout = layoutOf(files);
  const fallback = files[0]?.path ?? '(policies)';
  const parsed = cedar.checkParsePolicySet({ staticPolicies: layout.text });
  if (parsed.type === 'failure') return { ok: false, problems: problemsOf(layout, parsed.errors, fallback) };

  const parts = cedar.policySetTextToParts(layout.text);
  if (parts.type === 'failure') return { ok: false, problems: problemsOf(layout, parts.errors, fallback) };
  const problems: PolicyProblem[] = [];
  const policies = new Map<string, PolicyInfo>();
  let cursor = 0;
  for (const [index, policyText] of parts.policies.entries()) {
    const offset = layout.text.indexOf(policyText, cursor);
    cursor = offset === -1 ? cursor : offset + policyText.length;
    const where = locate(layout, offset === -1 ? 0 : offset);
    const json = cedar.policyToJson(policyText);
    if (json.type === 'failure') {
      problems.push(...problemsOf(layout, json.errors, where.file));
      continue;
    }
    const annotations = json.json.annotations ?? {};
    const approvals = approvalsOf(annotations.approval);
    if (typeof approvals === 'string') {
      problems.push({ ...where, message: approvals });
      continue;
    }
    const approvers = annotations.approvers ?? null;
    if (json.json.effect === 'forbid' && (approvals.length > 0 || approvers !== null)) {
      problems.push({
        ...where,
        message: '@approval and @approvers belong on permit policies; a forbid is never approved',
      });
    }
    if (approvals.includes('staff') && (approvers === null || approvers.trim().length === 0)) {
      problems.push({ ...where, message: 'a staff approval names the group that decides: @approvers("<group>")' });
    }
    if (approvers !== null && !approvals.includes('staff')) {
      problems.push({ ...where, message: '@approvers names who decides a staff approval; add @approval("staff")' });
    }
    const id = `policy${index}`;
    policies.set(id, {
      id,
      name: annotations.id ?? `${where.file}:${where.line}`,
      file: where.file,
      line: where.line,
      effect: json.json.effect,
      approvals,
      approvers: approvers?.trim() ?? null,
    });
  }

  const validation = cedar.validate({
    schema,
    policies: { staticPolicies: layout.text },
    validationSettings: { mode: 'strict' },
  });
  if (validation.type === 'failure') problems.push(...problemsOf(layout, validation.errors, fallback));
  else
    problems.push(
      ...problemsOf(
        layout,
        validation.validationErrors.map((found) => found.error),
        fallback,
      ),
    );
  if (problems.length > 0) return { ok: false, problems };

  compiledSets += 1;
  const setId = `${label}#${compiledSets}`;
  const prepared = cedar.preparsePolicySet(setId, { staticPolicies: layout.text });
  if (prepared.type === 'failure') return { ok: false, problems: problemsOf(layout, prepared.errors, fallback) };
  return { ok: true, policies: { setId, text: layout.text, policies } };
};
