// config:check's warnings about what the policies cannot reach: a system whose tools no permit
// can ever apply to, and a staff approval by a group no approver belongs to.
import { describe, expect, it } from 'vitest';
import { emptyApproverGroupWarnings, unreachableSystemWarnings } from '../../../shared/config/checks.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';
import { lines, loadDemo } from '../policy/policy-fixtures.js';

/** Two systems (crm, hr) of one tool each, an approver in `staff`, and the policies of p.cedar. */
const twoSystems = (cedar: string) =>
  snapshotOf(
    lines(
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
      '  - { id: ann, password: pw, groups: [staff] }',
      'policies: [p.cedar]',
    ),
    { files: { 'p.cedar': cedar }, file: 'org/gateway.yaml' },
  );

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
