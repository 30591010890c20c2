// Warnings config:check gives about a valid configuration whose policies cannot do what it seems
// to ask: a system none of whose tools any permit can reach (they are hidden from every agent),
// and a staff approval by a group no approver belongs to (nobody could decide its calls).
// Checked by config:check, not at every load: the reach of every tool is one partial evaluation
// each, which a function's cold start should not pay.
import { posix } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { GatewaySnapshot } from '../control-plane/gateway-snapshot.js';
import { directCallLimitMs } from '../invoke/time-budget.js';

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

/** Staff approvals by a group that no approver of the configuration belongs to. */
export const emptyApproverGroupWarnings = (snapshot: GatewaySnapshot, file: string): Warning[] => {
  const staffed = new Set(snapshot.config.approvers.flatMap((approver) => approver.groups));
  return snapshot.policy.policies.flatMap((policy) =>
    policy.approvers === null || staffed.has(policy.approvers)
      ? []
      : [
          {
            file: posix.join(posix.dirname(file.replaceAll('\\', '/')), policy.file),
            path: `policy "${policy.name}"`,
            line: policy.line,
            message: `@approvers("${policy.approvers}"): no approver under approvers: belongs to the group ${policy.approvers}, so locally nobody can decide the calls it holds (deployed, the identity provider's groups decide)`,
          },
        ],
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
