// The organization's Cedar policies, read from the configuration's policy files, checked by
// Cedar's own parser and validator against the generated schema, with every problem reported at
// its file and line. The human-step annotations are checked here too. Checked policies are
// pre-parsed for decisions, here or in the functions from what config:push checked.

import type { DetailedError, SchemaJson, ValidationError } from '@cedar-policy/cedar-wasm/nodejs';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { parseDurationMs } from '../config/duration.js';
import { isRecord } from '../objects.js';
import { type Escalation, maxQuorum } from './human-step.js';

export interface PolicyFile {
  readonly path: string;
  readonly text: string;
}

type Effect = 'permit' | 'forbid';
type Approval = 'staff' | 'customer';

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
  /** How many distinct approvers must approve a staff approval (@quorum; 1 without it). */
  readonly quorum: number;
  /** Who else may decide a call nobody decided in time (@escalate), or null. */
  readonly escalation: Escalation | null;
  /** How recently an approver must have signed in to decide (@reauth), in milliseconds, or null. */
  readonly reauth_ms: number | null;
  /** The sign-in's `acr` must be one of these to decide (@acr), or null for any. */
  readonly acr: readonly string[] | null;
}

interface PolicyProblem {
  readonly file: string;
  readonly line: number | null;
  readonly message: string;
}

export interface CompiledPolicies {
  /** Cedar's id for the pre-parsed set. */
  readonly setId: string;
  /** Pre-parses the set under setId unless it is already (deferPolicies): false when Cedar refuses it. */
  readonly parse: () => boolean;
  /** Whether the set is pre-parsed yet. */
  readonly isParsed: () => boolean;
  /** Each policy's text, by id (policy0, policy1, … in file order). */
  readonly texts: Readonly<Record<string, string>>;
  readonly policies: ReadonlyMap<string, PolicyInfo>;
  /** Argument fields some policy reads (`context.arguments.<field>`, or `has <field>`); 'all' when one reads them whole. */
  readonly argumentsRead: ReadonlySet<string> | 'all';
}

/** `context.arguments` in a policy's JSON form. */
const isArgumentsRecord = (node: unknown): boolean => {
  const access = isRecord(node) ? node['.'] : undefined;
  return isRecord(access) && access.attr === 'arguments' && isRecord(access.left) && access.left.Var === 'context';
};

/**
 * Adds the argument fields a policy's conditions read to `fields`; false when the policy uses the
 * context otherwise (the arguments whole), so that every field counts as read.
 */
const collectArgumentsRead = (node: unknown, fields: Set<string>): boolean => {
  if (Array.isArray(node)) return node.every((item) => collectArgumentsRead(item, fields));
  if (!isRecord(node)) return true;
  if (node.Var === 'context' || isArgumentsRecord(node)) return false;
  for (const operator of ['.', 'has']) {
    const access = node[operator];
    if (isRecord(access) && typeof access.attr === 'string' && isArgumentsRecord(access.left)) {
      fields.add(access.attr);
      return true;
    }
    // `context.arguments` itself, or `context has arguments`: no field read yet.
    if (isRecord(access) && access.attr === 'arguments' && isRecord(access.left) && access.left.Var === 'context') {
      return operator === 'has';
    }
  }
  return Object.values(node).every((child) => collectArgumentsRead(child, fields));
};

export type PolicyCompilation = { ok: true; policies: CompiledPolicies } | { ok: false; problems: PolicyProblem[] };

/**
 * Policies already parsed and validated against a catalog's schema (by config:push), as plain
 * data: what the deployed functions pre-parse without parsing or validating again.
 */
export interface CheckedPolicySet {
  readonly texts: Readonly<Record<string, string>>;
  readonly policies: readonly PolicyInfo[];
  readonly argumentsRead: readonly string[] | 'all';
}

/** The checked form of compiled policies, for the compiled snapshot. */
export const checkedPolicySetOf = (compiled: CompiledPolicies): CheckedPolicySet => ({
  texts: { ...compiled.texts },
  policies: [...compiled.policies.values()],
  argumentsRead: compiled.argumentsRead === 'all' ? 'all' : [...compiled.argumentsRead].sort(),
});

/** One policy's text and where it starts in its file. */
interface PolicySource {
  readonly file: PolicyFile;
  readonly offset: number;
  readonly text: string;
}

/**
 * Splits a policy file into its policies: each runs to the `;` that ends it, outside strings and
 * comments. Cedar then parses each one on its own, so a policy never runs across two files and
 * every problem is placed in the right file.
 */
export const splitPolicies = (file: PolicyFile): PolicySource[] => {
  const sources: PolicySource[] = [];
  const text = file.text;
  let start = -1;
  let position = 0;
  while (position < text.length) {
    const char = text[position];
    if (char === '/' && text[position + 1] === '/') {
      const end = text.indexOf('\n', position);
      position = end === -1 ? text.length : end + 1;
      continue;
    }
    if (start === -1 && char !== undefined && /\s/.test(char)) {
      position += 1;
      continue;
    }
    if (start === -1) start = position;
    if (char === '"') {
      position += 1;
      while (position < text.length && text[position] !== '"') position += text[position] === '\\' ? 2 : 1;
      position += 1;
      continue;
    }
    if (char === ';') {
      sources.push({ file, offset: start, text: text.slice(start, position + 1) });
      start = -1;
    }
    position += 1;
  }
  if (start !== -1) sources.push({ file, offset: start, text: text.slice(start) });
  return sources;
};

const lineAt = (text: string, offset: number): number => text.slice(0, Math.max(0, offset)).split('\n').length;

/** Cedar names policies by their ids; the gateway's messages use the policy's own name. */
const renameIds = (message: string, names: ReadonlyMap<string, string>): string =>
  message.replace(/policy `(policy\d+)`/g, (whole, id: string) => {
    const name = names.get(id);
    return name === undefined ? whole : `policy "${name}"`;
  });

const problemAt = (source: PolicySource, error: DetailedError, names: ReadonlyMap<string, string>): PolicyProblem => {
  const location = error.sourceLocations?.[0];
  const label = location?.label;
  return {
    file: source.file.path,
    line: lineAt(source.file.text, source.offset + (location?.start ?? 0)),
    message: `${renameIds(error.message, names)}${label ? ` (${label})` : ''}${error.help ? `; ${renameIds(error.help, names)}` : ''}`,
  };
};

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

/** The policies read so far, by Cedar's id, and what reading them found. */
interface PoliciesRead {
  readonly problems: PolicyProblem[];
  readonly policies: Map<string, PolicyInfo>;
  readonly texts: Record<string, string>;
  /** Each policy's name by id, so that Cedar's messages name policies as the operator does. */
  readonly names: Map<string, string>;
  readonly sourceOf: Map<string, PolicySource>;
  readonly fieldsRead: Set<string>;
  readsAll: boolean;
}

/** Who must agree before a permitted call runs, as the annotations say, with what is wrong with them. */
const humanStepOf = (
  effect: Effect,
  annotations: Readonly<Record<string, string>>,
  where: { readonly file: string; readonly line: number },
  problems: PolicyProblem[],
): Pick<PolicyInfo, 'approvals' | 'approvers' | 'quorum' | 'escalation' | 'reauth_ms' | 'acr'> => {
  const parsedApprovals = approvalsOf(annotations.approval);
  if (typeof parsedApprovals === 'string') problems.push({ ...where, message: parsedApprovals });
  const approvals = typeof parsedApprovals === 'string' ? [] : parsedApprovals;
  const approvers = annotations.approvers?.trim() ?? null;
  if (effect === 'forbid' && (approvals.length > 0 || approvers !== null)) {
    problems.push({
      ...where,
      message: '@approval and @approvers belong on permit policies; a forbid is never approved',
    });
  }
  if (approvals.includes('staff') && (approvers === null || approvers.length === 0)) {
    problems.push({ ...where, message: 'a staff approval names the group that decides: @approvers("<group>")' });
  }
  if (approvers !== null && !approvals.includes('staff') && typeof parsedApprovals !== 'string') {
    problems.push({ ...where, message: '@approvers names who decides a staff approval; add @approval("staff")' });
  }
  for (const name of Object.keys(annotations)) {
    const meant = misspelled(name);
    if (meant !== null)
      problems.push({ ...where, message: `@${name} is not an annotation the gateway reads; did you mean @${meant}?` });
  }
  const staffRules = staffRulesOf(annotations, approvers, (message) => problems.push({ ...where, message }));
  const named = (['quorum', 'escalate', 'reauth', 'acr'] as const).filter((name) => annotations[name] !== undefined);
  // On a forbid they are refused even beside @approval("staff"): a forbid is never approved.
  const misplaced = effect === 'forbid' || (!approvals.includes('staff') && typeof parsedApprovals !== 'string');
  if (named.length > 0 && misplaced) {
    const list = named.map((name) => `@${name}`).join(', ');
    const fix =
      effect === 'forbid' ? 'they belong on permit policies' : 'add @approval("staff") and @approvers("<group>")';
    problems.push({
      ...where,
      message: `${list} ${named.length === 1 ? 'asks' : 'ask'} more of a staff approval; ${fix}`,
    });
  }
  return { approvals, approvers, ...staffRules };
};

/** The annotations that ask for people. A misspelt one would be ignored by Cedar and ask less: it is refused. */
const humanStepAnnotations = ['approval', 'approvers', 'quorum', 'escalate', 'reauth', 'acr'] as const;

/** Edits (insert, delete, replace) that turn one word into another. */
const editDistance = (left: string, right: string): number => {
  let row = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (const [i, letter] of [...left].entries()) {
    const next = [i + 1];
    for (const [j, other] of [...right].entries())
      next.push(Math.min((row[j + 1] ?? 0) + 1, (next[j] ?? 0) + 1, (row[j] ?? 0) + (letter === other ? 0 : 1)));
    row = next;
  }
  return row[right.length] ?? 0;
};

/**
 * The human-step annotation a name seems meant as (@quorom, @Approvers, @re_auth, @escalation), or
 * null: another case or separators, two edits away from a name of six letters or more, or that
 * name with its last letter changed into an ending (@escalation).
 */
const misspelled = (name: string): string | null => {
  if ((humanStepAnnotations as readonly string[]).includes(name)) return null;
  const plain = name.toLowerCase().replace(/[-_]/g, '');
  const near = humanStepAnnotations
    .map((known) => ({ known, edits: editDistance(plain, known) }))
    .filter(
      ({ known, edits }) =>
        edits === 0 ||
        (known.length >= 6 && edits <= 2) ||
        (known.length >= 6 && plain.startsWith(known.slice(0, -1)) && plain.length <= known.length + 3),
    )
    .sort((left, right) => left.edits - right.edits);
  return near[0]?.known ?? null;
};

type StaffRules = Pick<PolicyInfo, 'quorum' | 'escalation' | 'reauth_ms' | 'acr'>;

/** Values an annotation lists: separated by commas or spaces. */
export const listed = (value: string): string[] => value.split(/[\s,]+/).filter((part) => part.length > 0);

const quorumOf = (value: string | undefined, problem: (message: string) => void): number => {
  if (value === undefined) return 1;
  const quorum = /^\s*\d{1,3}\s*$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isInteger(quorum) && quorum >= 2 && quorum <= maxQuorum) return quorum;
  problem(
    `@quorum("${value}"): expected how many distinct approvers must approve, 2 to ${maxQuorum} (one approver is the default: drop @quorum)`,
  );
  return 1;
};

const escalationOf = (
  value: string | undefined,
  approvers: string | null,
  problem: (message: string) => void,
): Escalation | null => {
  if (value === undefined) return null;
  const escalation = readEscalation(value);
  if (escalation === null) {
    problem(`@escalate("${value}"): expected a time and a group, such as @escalate("4h, operations")`);
    return null;
  }
  if (escalation.group === approvers) {
    problem(`@escalate("${value}"): ${escalation.group} decides already (@approvers); name another group`);
    return null;
  }
  return escalation;
};

/** @escalate's value ("4h, operations"): a time and a group, or null when it is not that. */
export const readEscalation = (value: string): Escalation | null => {
  const [after, group, ...rest] = listed(value);
  const afterMs = after === undefined ? null : parseDurationMs(after);
  if (afterMs === null || afterMs <= 0 || group === undefined || rest.length > 0 || !/^[A-Za-z0-9._-]+$/.test(group))
    return null;
  return { after_ms: afterMs, group };
};

const reauthOf = (value: string | undefined, problem: (message: string) => void): number | null => {
  if (value === undefined) return null;
  const ms = parseDurationMs(value);
  if (ms !== null && ms > 0) return ms;
  problem(`@reauth("${value}"): expected how recent the approver's sign-in must be, such as @reauth("5m")`);
  return null;
};

const acrOf = (value: string | undefined, problem: (message: string) => void): string[] | null => {
  if (value === undefined) return null;
  const values = listed(value);
  if (values.length > 0) return values;
  problem(`@acr("${value}") names no value; expected the sign-in classes that may decide, such as @acr("phr, phrh")`);
  return null;
};

/** What a staff approval asks beyond one approver of the group: a quorum, an escalation, a fresh or strong sign-in. */
const staffRulesOf = (
  annotations: Readonly<Record<string, string>>,
  approvers: string | null,
  problem: (message: string) => void,
): StaffRules => ({
  quorum: quorumOf(annotations.quorum, problem),
  escalation: escalationOf(annotations.escalate, approvers, problem),
  reauth_ms: reauthOf(annotations.reauth, problem),
  acr: acrOf(annotations.acr, problem),
});

/** Parses one policy with Cedar and records it under its id, with its name, human step and the fields it reads. */
const readPolicy = (source: PolicySource, index: number, read: PoliciesRead): void => {
  const id = `policy${index}`;
  const line = lineAt(source.file.text, source.offset);
  const where = { file: source.file.path, line };
  const json = cedar.policyToJson(source.text);
  if (json.type === 'failure') {
    read.problems.push(...json.errors.map((error) => problemAt(source, error, read.names)));
    return;
  }
  if (!collectArgumentsRead(json.json.conditions, read.fieldsRead)) read.readsAll = true;
  const annotations = json.json.annotations ?? {};
  const name = annotations.id ?? `${source.file.path}:${line}`;
  const earlier = [...read.policies.values()].find((policy) => policy.name === name);
  if (earlier !== undefined) {
    read.problems.push({
      ...where,
      message: `@id("${name}") is already used by the policy at ${earlier.file}:${earlier.line}`,
    });
  }
  const effect = json.json.effect;
  const step = humanStepOf(effect, annotations, where, read.problems);
  read.policies.set(id, { id, name, file: source.file.path, line, effect, ...step });
  read.texts[id] = source.text;
  read.names.set(id, name);
  read.sourceOf.set(id, source);
};

/** Each problem the validator found, at its policy's file and line, once. */
const validationProblems = (errors: readonly ValidationError[], read: PoliciesRead): PolicyProblem[] => {
  const problems: PolicyProblem[] = [];
  const seen = new Set<string>();
  for (const found of errors) {
    const source = read.sourceOf.get(found.policyId);
    if (source === undefined) continue;
    const problem = problemAt(source, found.error, read.names);
    const key = JSON.stringify(problem);
    if (!seen.has(key)) problems.push(problem);
    seen.add(key);
  }
  return problems;
};

export const compilePolicies = (
  files: readonly PolicyFile[],
  schema: SchemaJson<string>,
  /** Names the pre-parsed set (e.g. the configuration version). */
  label: string,
): PolicyCompilation => {
  const read: PoliciesRead = {
    problems: [],
    policies: new Map(),
    texts: {},
    names: new Map(),
    sourceOf: new Map(),
    fieldsRead: new Set(),
    readsAll: false,
  };
  for (const [index, source] of files.flatMap(splitPolicies).entries()) readPolicy(source, index, read);
  const validation = cedar.validate({
    schema,
    policies: { staticPolicies: read.texts },
    validationSettings: { mode: 'strict' },
  });
  const file = files[0]?.path ?? '(policies)';
  if (validation.type === 'failure') {
    return { ok: false, problems: validation.errors.map((error) => ({ file, line: null, message: error.message })) };
  }
  const problems = [...read.problems, ...validationProblems(validation.validationErrors, read)];
  if (problems.length > 0) return { ok: false, problems };
  const argumentsRead = read.readsAll ? 'all' : [...read.fieldsRead];
  return preparePolicies({ texts: read.texts, policies: [...read.policies.values()], argumentsRead }, label, file);
};

/**
 * Pre-parses policies that were parsed and validated against the schema when they were compiled
 * (compilePolicies here, or config:push for the deployed functions), so a decision needs no
 * further parsing. Decisions need no schema: each request brings its action's groups.
 */
export const preparePolicies = (
  checked: CheckedPolicySet,
  /** Names the pre-parsed set (e.g. the configuration version). */
  label: string,
  /** Where a problem is reported. */
  file = '(policies)',
): PolicyCompilation => {
  const policies = deferPolicies(checked, label);
  const prepared = cedar.preparsePolicySet(policies.setId, { staticPolicies: { ...policies.texts } });
  if (prepared.type === 'failure') {
    return { ok: false, problems: prepared.errors.map((error) => ({ file, line: null, message: error.message })) };
  }
  return { ok: true, policies: { ...policies, parse: () => true, isParsed: () => true } };
};

/**
 * Checked policies pre-parsed only when a decision first needs Cedar: for a function whose Cedar
 * is the release that checked them at config:push (known-decisions.ts), which parses them alike.
 */
export const deferPolicies = (checked: CheckedPolicySet, label: string): CompiledPolicies => {
  const { texts } = checked;
  compiledSets += 1;
  const setId = `${label}#${compiledSets}`;
  let parsed: boolean | undefined;
  return {
    setId,
    parse: () => {
      parsed ??= cedar.preparsePolicySet(setId, { staticPolicies: { ...texts } }).type === 'success';
      return parsed;
    },
    isParsed: () => parsed === true,
    texts: { ...texts },
    policies: new Map(checked.policies.map((policy) => [policy.id, policy])),
    argumentsRead: checked.argumentsRead === 'all' ? 'all' : new Set(checked.argumentsRead),
  };
};
