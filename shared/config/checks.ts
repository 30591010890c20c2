// What config:check says about a valid configuration whose policies cannot do what they seem to
// ask. Warnings: a system none of whose tools any permit can reach (they are hidden from every
// agent), and a staff approval by a group too few approvers belong to (nobody could decide, or
// complete its quorum, locally). Refusals: an escalation to a group the configuration does not know,
// or after the call would have expired.
// Checked by config:check, not at every load: the reach of every tool is one partial evaluation
// each, which a function's cold start should not pay.
import { posix } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { GatewaySnapshot } from '../control-plane/gateway-snapshot.js';
import { directCallLimitMs } from '../invoke/time-budget.js';
import type { PolicyInfo } from '../policy/policy-set.js';
import { durationText } from './duration.js';

type Warning = GatewaySnapshot['warnings'][number];

/** The line of `systems[index]` in the configuration's text. */
const systemLine = (source: string, index: number): number | null => {
  const lines = new LineCounter();
  const node = parseDocument(source, { lineCounter: lines }).getIn(['systems', index], true);
  const range = typeof node === 'object' && node !== null && 'range' in node ? node.range : undefined;
  return Array.isArray(range) && typeof range[0] === 'number' ? lines.linePos(range[0]).line : null;
};

/** Systems with known tools none of which any permit can ever reach, whoever the agent and whatever the arguments. */
export const unreachableSystemWarnings = (snapshot: GatewaySnapshot, file: string): Warning[] =>
  snapshot.config.systems.flatMap((system, index) => {
    const tools = snapshot.catalog.tools.filter((tool) => tool.systemKey === system.key);
    const reaches = tools.map((tool) => snapshot.policy.reach(tool));
    if (tools.length === 0 || reaches.some((reach) => reach.permits.length > 0 && reach.alwaysForbidden.length === 0))
      return [];
    const forbidden = reaches.some((reach) => reach.alwaysForbidden.length > 0);
    return [
      {
        file,
        path: `systems[${index}]`,
        line: systemLine(snapshot.source, index),
        message: `no permit can ever apply to any tool of ${system.key} (${tools.length} tool${tools.length === 1 ? '' : 's'})${forbidden ? ' that a forbid does not always refuse' : ''}: they will be hidden from every agent; write a permit for them (npm run policy:explain says why a tool is hidden)`,
      },
    ];
  });

/** A problem at a policy: its file (beside the configuration's), its name and line. */
const atPolicy = (policy: PolicyInfo, file: string, message: string): Warning => ({
  file: posix.join(posix.dirname(file.replaceAll('\\', '/')), policy.file),
  path: `policy "${policy.name}"`,
  line: policy.line,
  message,
});

/** The approvers of the configuration in each group, by id. */
const membersByGroup = (snapshot: GatewaySnapshot): Map<string, string[]> => {
  const members = new Map<string, string[]>();
  for (const approver of snapshot.config.approvers)
    for (const group of approver.groups) members.set(group, [...(members.get(group) ?? []), approver.id]);
  return members;
};

/** Why a quorum cannot be completed by the approvers configured here, or null when it can. */
const unmetQuorum = (policy: PolicyInfo, members: ReadonlyMap<string, readonly string[]>): string | null => {
  const group = policy.approvers ?? '';
  const deciders = members.get(group) ?? [];
  if (deciders.length >= policy.quorum) return null;
  const escalated = policy.escalation === null ? [] : (members.get(policy.escalation.group) ?? []);
  const after = new Set([...deciders, ...escalated]).size;
  const when =
    policy.escalation !== null && after >= policy.quorum
      ? `its calls can reach ${policy.quorum} approvals only once they escalate to ${policy.escalation.group}`
      : `no call it holds can ever reach ${policy.quorum} approvals`;
  return `@quorum("${policy.quorum}"): only ${deciders.length} approver${deciders.length === 1 ? '' : 's'} under approvers: belong${deciders.length === 1 ? 's' : ''} to ${group} (${deciders.join(', ')}), so locally ${when} (deployed, the identity provider's groups decide)`;
};

/** Staff approvals by a group that no approver of the configuration belongs to, or too few for the policy's quorum. */
export const emptyApproverGroupWarnings = (snapshot: GatewaySnapshot, file: string): Warning[] => {
  const members = membersByGroup(snapshot);
  return snapshot.policy.policies.flatMap((policy) => {
    if (policy.approvers === null) return [];
    if (!members.has(policy.approvers)) {
      return [
        atPolicy(
          policy,
          file,
          `@approvers("${policy.approvers}"): no approver under approvers: belongs to the group ${policy.approvers}, so locally nobody can decide the calls it holds (deployed, the identity provider's groups decide)`,
        ),
      ];
    }
    const unmet = unmetQuorum(policy, members);
    return unmet === null ? [] : [atPolicy(policy, file, unmet)];
  });
};

/** What a policy's @escalate asks that this configuration cannot give: a group it does not know, a time after expiry. */
const escalationProblems = (policy: PolicyInfo, known: ReadonlySet<string>, approvalTimeMs: number): string[] => {
  const { escalation } = policy;
  if (escalation === null) return [];
  const written = `@escalate("${durationText(escalation.after_ms)}, ${escalation.group}")`;
  return [
    ...(known.has(escalation.group)
      ? []
      : [
          `${written}: ${escalation.group} is a group this configuration does not know (no approver under approvers: belongs to it and no policy's @approvers names it), so nobody may be there to decide what escalates to it; name a group that decides other calls, or give it an approver (deployed, the identity provider's groups decide who is in it)`,
        ]),
    ...(escalation.after_ms < approvalTimeMs
      ? []
      : [
          `${written}: a held call expires after settings.approval_time (${durationText(approvalTimeMs)}), before it would escalate; escalate sooner than that`,
        ]),
  ];
};

/**
 * Refusals: annotations asking what this configuration cannot give. Loading from the files refuses
 * them (config:check, config:push, the local runtime: infra/local/config-files.ts).
 */
export const annotationRefusals = (snapshot: GatewaySnapshot, file: string): Warning[] => {
  const known = new Set([
    ...membersByGroup(snapshot).keys(),
    ...snapshot.policy.policies.flatMap((policy) => (policy.approvers === null ? [] : [policy.approvers])),
  ]);
  const approvalTimeMs = snapshot.config.settings.approval_time;
  return snapshot.policy.policies.flatMap((policy) =>
    escalationProblems(policy, known, approvalTimeMs).map((message) => atPolicy(policy, file, message)),
  );
};

/** Systems whose timeout is longer than a direct call may take in AWS (API Gateway answers within 30 s). */
export const directCallTimeoutWarnings = (snapshot: GatewaySnapshot, file: string): Warning[] =>
  snapshot.config.systems.flatMap((system, index) =>
    system.timeout <= directCallLimitMs
      ? []
      : [
          {
            file,
            path: `systems[${index}].timeout`,
            line: systemLine(snapshot.source, index),
            message: `${system.key}: a timeout of ${system.timeout / 1000}s is longer than a direct call may take in AWS (${directCallLimitMs / 1000}s: API Gateway answers within 30s and the outcome must still be recorded): its direct calls there get at most that; approved calls run in the held-call steps, which allow it`,
          },
        ],
  );

/** Every warning of this module, for config:check. */
export const policyWarnings = (snapshot: GatewaySnapshot, file: string): Warning[] => [
  ...unreachableSystemWarnings(snapshot, file),
  ...emptyApproverGroupWarnings(snapshot, file),
];
