// The decision rules that need no store: who may decide, and what a rejection's reason becomes.
import { describe, expect, it } from 'vitest';
import { staffApprovalsOf } from '../../../shared/approvals/quorum.js';
import { cleanNote, decidingGroup, mayDecide } from '../../../shared/use-cases/approver-decisions.js';
import { anExecution, humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';

const held = (
  step: { staff: string | null; customer: boolean },
  more: Parameters<typeof humanStep>[1] = {},
  created_at = new Date(0).toISOString(),
) =>
  anExecution({
    created_at,
    decision: { effect: 'allow', reason: null, determining: [], step: humanStep(step, more), config_version: 'v1' },
  });

const now = Date.parse('2026-01-01T12:00:00Z');
const farah = { id: 'farah', name: null, groups: ['finance'] };

describe('who may decide', () => {
  it(
    verifies('console.approver-group', 'only an approver of the group the policy names, and never the requester'),
    () => {
      const execution = held({ staff: 'finance', customer: false });
      expect(mayDecide(farah, execution, now)).toBeNull();
      expect(mayDecide({ id: 'oskar', name: null, groups: ['operations'] }, execution, now)).toBe('not_an_approver');
      expect(mayDecide({ id: 'nobody', name: null, groups: [] }, execution, now)).toBe('not_an_approver');
      expect(mayDecide({ id: 'procurement-agent', name: null, groups: ['finance'] }, execution, now)).toBe('own_call');
      expect(mayDecide(farah, held({ staff: null, customer: true }), now)).toBe('not_an_approver');
      expect(mayDecide(farah, anExecution({ decision: null }), now)).toBe('not_an_approver');
    },
  );
});

describe('who may decide a high-stakes call', () => {
  const oskar = { id: 'oskar', name: null, groups: ['operations'] };
  const created = '2026-01-01T08:00:00.000Z';
  const escalating = held(
    { staff: 'finance', customer: false },
    { escalation: { after_ms: 4 * 3_600_000, group: 'operations' } },
    created,
  );

  it(
    verifies(
      'quorum.escalation-group-decides',
      'the escalation group decides from created_at + the escalation time, recorded or not, never before',
    ),
    () => {
      const due = Date.parse(created) + 4 * 3_600_000;
      expect(mayDecide(oskar, escalating, due - 1)).toBe('not_an_approver');
      expect(mayDecide(oskar, escalating, due)).toBeNull();
      expect(mayDecide(oskar, { ...escalating, escalated_at: created }, due - 1)).toBe('not_an_approver');
      expect(decidingGroup(oskar, escalating, due)).toBe('operations');
      // The policy's own group decides throughout, as itself.
      expect(decidingGroup(farah, escalating, due - 1)).toBe('finance');
      expect(decidingGroup(farah, escalating, due)).toBe('finance');
      // Never the requester, in either group.
      expect(mayDecide({ ...oskar, id: 'procurement-agent' }, escalating, due)).toBe('own_call');
    },
  );

  it(verifies('quorum.distinct-approvers', 'someone who approved already may not decide again'), () => {
    const approval = { by: 'farah', at: created, group: 'finance', signed_in_at: null, acr: null };
    const once = { ...held({ staff: 'finance', customer: false }, { quorum: 2 }), approvals: [approval] };
    expect(mayDecide(farah, once, now)).toBe('already_approved');
    expect(mayDecide({ ...farah, id: 'fiona' }, once, now)).toBeNull();
  });

  it(
    verifies(
      'quorum.fresh-sign-in-rule',
      'with @reauth, a sign-in older than allowed or of unknown time may not decide',
    ),
    () => {
      const fresh = held({ staff: 'finance', customer: false }, { reauth_ms: 300_000 });
      expect(mayDecide({ ...farah, signedInAt: now - 300_000 }, fresh, now)).toBeNull();
      expect(mayDecide({ ...farah, signedInAt: now - 300_001 }, fresh, now)).toBe('sign_in_again');
      expect(mayDecide({ ...farah, signedInAt: null }, fresh, now)).toBe('sign_in_again');
      expect(mayDecide(farah, fresh, now)).toBe('sign_in_again');
      // Without @reauth, an old sign-in decides as before.
      expect(mayDecide({ ...farah, signedInAt: 0 }, held({ staff: 'finance', customer: false }), now)).toBeNull();
    },
  );

  it(verifies('quorum.acr-rule', 'with @acr, only a sign-in of one of the named classes may decide'), () => {
    const strong = held({ staff: 'finance', customer: false }, { acr: ['phr', 'phrh'] });
    expect(mayDecide({ ...farah, acr: 'phrh' }, strong, now)).toBeNull();
    expect(mayDecide({ ...farah, acr: 'pwd' }, strong, now)).toBe('acr_not_met');
    expect(mayDecide({ ...farah, acr: null }, strong, now)).toBe('acr_not_met');
    expect(mayDecide(farah, strong, now)).toBe('acr_not_met');
  });
});

describe('the approvals a record holds', () => {
  it(
    verifies('quorum.receipt-approvals', 'a record approved before approvals were kept holds its one approver'),
    () => {
      const decided = { decided_by: 'farah', decided_at: '2026-01-01T08:00:00.000Z' };
      const approved = { ...held({ staff: 'finance', customer: false }), ...decided, status: 'approved' as const };
      expect(staffApprovalsOf(approved)).toEqual([
        { by: 'farah', at: decided.decided_at, group: 'finance', signed_in_at: null, acr: null },
      ]);
      // A rejection is no approval; a customer's confirmation is not staff's.
      expect(staffApprovalsOf({ ...approved, status: 'rejected' })).toEqual([]);
      expect(staffApprovalsOf({ ...held({ staff: null, customer: true }), ...decided, status: 'approved' })).toEqual(
        [],
      );
    },
  );
});

describe('a rejection’s reason', () => {
  it(
    verifies(
      'approvals.rejection-note',
      'becomes one clean line: normalized, no control, invisible or direction characters',
    ),
    () => {
      expect(cleanNote('  Budget frozen\n until Q3\u202e ')).toBe('Budget frozen until Q3');
      expect(cleanNote('Cafe\u0301 order\u200b twice\u0000')).toBe('Café order twice');
      expect(cleanNote('\t\n \u200b')).toBeNull();
      expect(cleanNote(null)).toBeNull();
      expect(cleanNote(undefined)).toBeNull();
    },
  );
});
