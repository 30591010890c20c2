// A configuration snapshot: the validated configuration with its tool catalog and compiled
// policies. The local runtime assembles it from the files it reads (snapshot.ts), the deployed
// functions from the snapshot config:push compiled (compiled-snapshot.ts); the last step, the
// policies compiled against a Cedar model generated from the catalog, is this one for both.
import { posix } from 'node:path';
import { type Catalog, catalogOf, type ToolWithValidator } from '../catalog/tool.js';
import type { ConfigProblem, ResolvedConfig } from '../config/resolved.js';
import { cedarModelOf } from '../policy/cedar-schema.js';
import { PolicyEngine } from '../policy/engine.js';
import { type KnownDecisions, KnownDecisionTable } from '../policy/known-decisions.js';
import {
  type CheckedPolicySet,
  compilePolicies,
  deferPolicies,
  type PolicyCompilation,
  type PolicyFile,
  preparePolicies,
} from '../policy/policy-set.js';

export interface GatewaySnapshot {
  /** Content hash of the configuration and every file it names. */
  readonly version: string;
  readonly config: ResolvedConfig;
  readonly catalog: Catalog;
  /** The organization's policies, compiled against this catalog. */
  readonly policy: PolicyEngine;
  /** Problems that left something out but did not invalidate the configuration. */
  readonly warnings: readonly ConfigProblem[];
  /** The configuration text itself. */
  readonly source: string;
  /** Every file read, with its text: what `config:push` bundles. */
  readonly files: ReadonlyMap<string, string>;
}

export type SnapshotLoad = { ok: true; snapshot: GatewaySnapshot } | { ok: false; problems: ConfigProblem[] };

/** What a snapshot is made of, before its policies are compiled. */
export interface SnapshotParts extends Omit<GatewaySnapshot, 'catalog' | 'policy'> {
  /** The configuration file's path, for messages. */
  readonly file: string;
  readonly tools: readonly ToolWithValidator[];
  readonly disabled: readonly ToolWithValidator[];
  /** The policy files, in the configuration's order. */
  readonly policies: readonly PolicyFile[];
  /**
   * The same policies as config:push parsed and validated them against this very catalog: given,
   * they are only pre-parsed (the deployed functions' cold start), not parsed and validated again.
   */
  readonly checked?: CheckedPolicySet;
  /** Answers config:push knew for every call of an agent to a tool (known-decisions.ts), beside `checked`. */
  readonly known?: KnownDecisions;
}

/**
 * The Cedar model policies are checked against: generated from this very catalog (turned-off tools
 * too). Every system is an action group, so a policy may name a system whose tools are not known yet.
 */
const modelOf = (catalog: Catalog, config: ResolvedConfig) =>
  cedarModelOf(
    [...catalog.tools, ...catalog.disabled],
    config.systems.map((system) => system.key),
  );

/**
 * Checked policies, pre-parsed now; or when a decision first needs Cedar if config:push's answers
 * are usable (the same Cedar release checked them, so they parse here too).
 */
const checkedPolicies = (
  checked: CheckedPolicySet,
  known: KnownDecisionTable | null,
  parts: SnapshotParts,
): PolicyCompilation =>
  known === null
    ? preparePolicies(checked, parts.version, parts.file)
    : { ok: true, policies: deferPolicies(checked, parts.version) };

export const assembleSnapshot = (parts: SnapshotParts): SnapshotLoad => {
  const { config, version } = parts;
  const catalog = catalogOf(parts.tools, parts.disabled);
  const model = modelOf(catalog, config);
  const known = parts.checked === undefined ? null : KnownDecisionTable.of(parts.known);
  const compiled =
    parts.checked === undefined
      ? compilePolicies(parts.policies, model.schema, version)
      : checkedPolicies(parts.checked, known, parts);
  if (!compiled.ok) {
    return {
      ok: false,
      problems: compiled.problems.map((found) => ({
        file: posix.join(posix.dirname(parts.file.replaceAll('\\', '/')), found.file),
        path: 'policies',
        line: found.line,
        message: found.message,
      })),
    };
  }
  return {
    ok: true,
    snapshot: {
      version,
      config,
      catalog,
      policy: new PolicyEngine(compiled.policies, model, known),
      warnings: parts.warnings,
      source: parts.source,
      files: parts.files,
    },
  };
};

export type ProposedPolicies =
  | { readonly ok: true; readonly policy: PolicyEngine }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

/**
 * Other policies compiled against the snapshot's own catalog and schema, as a change to them would
 * be (policy:replay's proposed set); each problem at its file (as given) and line.
 */
export const proposedPolicies = (snapshot: GatewaySnapshot, files: readonly PolicyFile[]): ProposedPolicies => {
  const model = modelOf(snapshot.catalog, snapshot.config);
  const compiled = compilePolicies(files, model.schema, `${snapshot.version}+proposed`);
  if (!compiled.ok) {
    const problems = compiled.problems.map((found) => ({ ...found, path: 'policies' }));
    return { ok: false, problems };
  }
  return { ok: true, policy: new PolicyEngine(compiled.policies, model) };
};
