// config:check's warnings about what the policies cannot reach: a system whose tools no permit
// can ever apply to, a staff approval by a group no approver belongs to (or too few for its
// quorum); and its refusals of an escalation nobody could take.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileSnapshotFromFile, loadSnapshotFromFile } from '../../../infra/local/config-files.js';
import {
  annotationRefusals,
  emptyApproverGroupWarnings,
  unreachableSystemWarnings,
} from '../../../shared/config/checks.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';
import { lines, loadDemo } from '../policy/policy-fixtures.js';

/** Two systems (crm, hr) of one tool each, an approver in `staff` (unless others are given), and policies from p.cedar. */
const twoSystemsText = (more: { readonly settings?: string; readonly approvers?: readonly string[] } = {}) =>
  lines(
    ...(more.settings === undefined ? [] : [more.settings]),
    'systems:',
    '  - key: crm',
    '    base_url: http://127.0.0.1:9',
    '    operations:',
    '      - { id: notes.add, method: POST, path: /notes, description: Adds a note. }',
    '  - key: hr',
    '    base_url: http://127.0.0.1:9',
    '    operations:',
    '      - { id: people.list, method: GET, path: /people, description: Lists people. }',
    '      - { id: people.fire, method: DELETE, path: /people, description: Fires people. }',
    'approvers:',
    ...(more.approvers ?? ['  - { id: ann, password: pw, groups: [staff] }']),
    'policies: [p.cedar]',
  );

/** The same, loaded with the policies of p.cedar. */
const twoSystems = (cedar: string, more: Parameters<typeof twoSystemsText>[0] = {}) =>
  snapshotOf(twoSystemsText(more), { files: { 'p.cedar': cedar }, file: 'org/gateway.yaml' });

describe('systems no permit reaches', () => {
  it(verifies('ops.config-check-reach', 'warns of a system no permit mentions, naming it and its line'), async () => {
    const snapshot = await twoSystems(
      'permit (principal in Group::"sales", action == Action::"crm.notes.add", resource);',
    );
    expect(unreachableSystemWarnings(snapshot, 'org/gateway.yaml')).toEqual([
      {
        file: 'org/gateway.yaml',
        path: 'systems[1]',
        line: 6,
        message:
          'no permit can ever apply to any tool of hr (2 tools): they will be hidden from every agent; write a permit for them (npm run policy:explain says why a tool is hidden)',
      },
    ]);
  });

  it(
    verifies('ops.config-check-reach', 'counts a permit for any agent or condition, and a forbid that always holds'),
    async () => {
      // A permit only some agents and some arguments meet still reaches the system.
      const conditional = await twoSystems(
        'permit (principal, action in Action::"hr", resource) when { principal.outside && action in Action::"read" };\npermit (principal, action == Action::"crm.notes.add", resource);',
      );
      expect(unreachableSystemWarnings(conditional, 'org/gateway.yaml')).toEqual([]);
      // A permit whose conditions can never hold, or that a forbid always overrides, does not.
      const never = await twoSystems(
        'permit (principal, action in Action::"hr", resource) when { 1 == 2 };\npermit (principal, action == Action::"crm.notes.add", resource);',
      );
      expect(unreachableSystemWarnings(never, 'org/gateway.yaml').map((warning) => warning.path)).toEqual([
        'systems[1]',
      ]);
      const forbidden = await twoSystems(
        'permit (principal, action, resource);\nforbid (principal, action in Action::"hr", resource);',
      );
      expect(unreachableSystemWarnings(forbidden, 'org/gateway.yaml').map((warning) => warning.message)).toEqual([
        'no permit can ever apply to any tool of hr (2 tools) that a forbid does not always refuse: they will be hidden from every agent; write a permit for them (npm run policy:explain says why a tool is hidden)',
      ]);
    },
  );

  it(verifies('ops.config-check-reach', 'says nothing of the demo, whose every system is reached'), async () => {
    expect(unreachableSystemWarnings(await loadDemo(), 'gateway.config.yaml')).toEqual([]);
  });
});

describe('approver groups', () => {
  it(
    verifies(
      'ops.config-check-approvers',
      'warns of a staff approval by a group no approver belongs to, at the policy',
    ),
    async () => {
      const snapshot = await twoSystems(
        lines(
          '@id("notes")',
          '@approval("staff")',
          '@approvers("staff")',
          'permit (principal, action == Action::"crm.notes.add", resource);',
          '@approval("staff")',
          '@approvers("nobody-here")',
          'permit (principal, action in Action::"hr", resource);',
        ),
      );
      expect(emptyApproverGroupWarnings(snapshot, 'org/gateway.yaml')).toEqual([
        {
          file: 'org/p.cedar',
          path: 'policy "p.cedar:5"',
          line: 5,
          message:
            '@approvers("nobody-here"): no approver under approvers: belongs to the group nobody-here, so locally nobody can decide the calls it holds (deployed, the identity provider\'s groups decide)',
        },
      ]);
      expect(emptyApproverGroupWarnings(await loadDemo(), 'gateway.config.yaml')).toEqual([]);
    },
  );
});

/** A staff permit for crm.notes.add, by staff, asking more (its annotations start on line 1). */
const notesPolicy = (...annotations: string[]): string =>
  lines(
    '@approval("staff")',
    '@approvers("staff")',
    ...annotations,
    'permit (principal, action == Action::"crm.notes.add", resource);',
  );

describe('quorums the approvers here cannot meet', () => {
  it(
    verifies('annotations.config-check-quorum', 'warns of a quorum larger than the group, naming who is in it'),
    async () => {
      const snapshot = await twoSystems(notesPolicy('@quorum("2")'));
      expect(emptyApproverGroupWarnings(snapshot, 'org/gateway.yaml')).toEqual([
        {
          file: 'org/p.cedar',
          path: 'policy "p.cedar:1"',
          line: 1,
          message:
            '@quorum("2"): only 1 approver under approvers: belongs to staff (ann), so locally no call it holds can ever reach 2 approvals (deployed, the identity provider\'s groups decide)',
        },
      ]);
      // Annotations add no refusal when the group is staffed and escalation is not asked for.
      expect(annotationRefusals(snapshot, 'org/gateway.yaml')).toEqual([]);
    },
  );

  it(
    verifies('annotations.config-check-quorum', 'counts the escalation group, and is quiet when the group is enough'),
    async () => {
      const escalating = await twoSystems(notesPolicy('@quorum("2")', '@escalate("4h, ops")'), {
        approvers: [
          '  - { id: olga, password: pw, groups: [ops] }',
          '  - { id: ann, password: pw, groups: [staff, ops] }',
        ],
      });
      expect(emptyApproverGroupWarnings(escalating, 'org/gateway.yaml').map((warning) => warning.message)).toEqual([
        '@quorum("2"): only 1 approver under approvers: belongs to staff (ann), so locally its calls can reach 2 approvals only once they escalate to ops (deployed, the identity provider\'s groups decide)',
      ]);
      const staffed = await twoSystems(notesPolicy('@quorum("2")'), {
        approvers: ['  - { id: bea, password: pw, groups: [staff] }', '  - { id: ann, password: pw, groups: [staff] }'],
      });
      expect(emptyApproverGroupWarnings(staffed, 'org/gateway.yaml')).toEqual([]);
    },
  );
});

describe('escalations config:check refuses', () => {
  it(
    verifies(
      'annotations.config-check-escalation',
      'refuses an escalation to a group no approver belongs to and no @approvers names, at the policy',
    ),
    async () => {
      const snapshot = await twoSystems(lines('// notes', notesPolicy('@escalate("4h, operatons")')));
      expect(annotationRefusals(snapshot, 'org/gateway.yaml')).toEqual([
        {
          file: 'org/p.cedar',
          path: 'policy "p.cedar:2"',
          line: 2,
          message:
            '@escalate("4h, operatons"): operatons is a group this configuration does not know (no approver under approvers: belongs to it and no policy\'s @approvers names it), so nobody may be there to decide what escalates to it; name a group that decides other calls, or give it an approver (deployed, the identity provider\'s groups decide who is in it)',
        },
      ]);
    },
  );

  it(
    verifies(
      'annotations.config-check-escalation',
      'refuses the same escalation where config:push compiles the files and where the local runtime loads them',
    ),
    async () => {
      const folder = await mkdtemp(join(tmpdir(), 'escalation-refused-'));
      try {
        await writeFile(join(folder, 'gateway.yaml'), twoSystemsText());
        await writeFile(join(folder, 'p.cedar'), lines('// notes', notesPolicy('@escalate("4h, operatons")')));
        const file = join(folder, 'gateway.yaml');
        for (const outcome of [
          await compileSnapshotFromFile(file, {}, { unsetVariables: 'placeholder' }),
          await loadSnapshotFromFile(file, {}, { unsetVariables: 'placeholder' }),
        ]) {
          expect(outcome.ok ? [] : outcome.problems.map(formatProblem)).toEqual([
            expect.stringMatching(/p\.cedar:2: .*operatons is a group this configuration does not know/),
          ]);
        }
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    },
  );

  it(
    verifies(
      'annotations.config-check-escalation',
      "knows a group from an approver's groups or from another policy's @approvers",
    ),
    async () => {
      const byApprover = await twoSystems(notesPolicy('@escalate("4h, ops")'), {
        approvers: ['  - { id: ann, password: pw, groups: [staff] }', '  - { id: olga, password: pw, groups: [ops] }'],
      });
      expect(annotationRefusals(byApprover, 'org/gateway.yaml')).toEqual([]);
      const byPolicy = await twoSystems(
        lines(
          notesPolicy('@escalate("4h, ops")'),
          '@approval("staff")',
          '@approvers("ops")',
          'permit (principal, action in Action::"hr", resource);',
        ),
      );
      expect(annotationRefusals(byPolicy, 'org/gateway.yaml')).toEqual([]);
    },
  );

  it(
    verifies('annotations.config-check-escalation', 'refuses an escalation not sooner than the approval time'),
    async () => {
      const policies = lines(
        '@approval("staff")',
        '@approvers("ops")',
        'permit (principal, action in Action::"hr", resource);',
        notesPolicy('@escalate("2h, ops")'),
        notesPolicy('@escalate("90m, ops")'),
      );
      const snapshot = await twoSystems(policies, { settings: 'settings: { approval_time: 2h }' });
      expect(annotationRefusals(snapshot, 'org/gateway.yaml')).toEqual([
        {
          file: 'org/p.cedar',
          path: 'policy "p.cedar:4"',
          line: 4,
          message:
            '@escalate("2h, ops"): a held call expires after settings.approval_time (2h), before it would escalate; escalate sooner than that',
        },
      ]);
      // The default approval time (24h) leaves both in time.
      expect(annotationRefusals(await twoSystems(policies), 'org/gateway.yaml')).toEqual([]);
    },
  );
});
