// The decision rules that need no store: who may decide, and what a rejection's reason becomes.
import { describe, expect, it } from 'vitest';
import { cleanNote, mayDecide } from '../../../shared/use-cases/approver-decisions.js';
import { anExecution, humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';

const held = (step: { staff: string | null; customer: boolean }) =>
  anExecution({
    decision: { effect: 'allow', reason: null, determining: [], step: humanStep(step), config_version: 'v1' },
  });

describe('who may decide', () => {
  it(
    verifies('console.approver-group', 'only an approver of the group the policy names, and never the requester'),
    () => {
      const execution = held({ staff: 'finance', customer: false });
      expect(mayDecide({ id: 'farah', name: null, groups: ['finance'] }, execution)).toBeNull();
      expect(mayDecide({ id: 'oskar', name: null, groups: ['operations'] }, execution)).toBe('not_an_approver');
      expect(mayDecide({ id: 'nobody', name: null, groups: [] }, execution)).toBe('not_an_approver');
      expect(mayDecide({ id: 'procurement-agent', name: null, groups: ['finance'] }, execution)).toBe('own_call');
      expect(mayDecide({ id: 'farah', name: null, groups: ['finance'] }, held({ staff: null, customer: true }))).toBe(
        'not_an_approver',
      );
      expect(mayDecide({ id: 'farah', name: null, groups: ['finance'] }, anExecution({ decision: null }))).toBe(
        'not_an_approver',
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
