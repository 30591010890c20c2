// The call page of a call that asks a quorum: how many approvals are given of how many, by whom
// and when, and no decision offered to someone who approved already.
import { describe, expect, it } from 'vitest';
import { executionPage, type PageContext, refusalMessages } from '../../../shared/edge/console/pages.js';
import { anExecution, humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';

const context: PageContext = {
  approver: { id: 'farah', name: 'Farah', groups: ['finance'] },
  csrf: 'csrf-token',
  now: Date.parse('2026-11-29T12:00:00.000Z'),
};

const held = (quorum: number, approvals: { by: string; group: string }[]) =>
  anExecution({
    created_at: '2026-11-29T11:00:00.000Z',
    expires_at: '2026-11-29T13:00:00.000Z',
    decision: {
      effect: 'allow',
      reason: null,
      determining: [],
      step: humanStep({ staff: 'finance', customer: false }, { quorum }),
      config_version: 'v1',
    },
    approvals: approvals.map((approval) => ({
      ...approval,
      at: '2026-11-29T11:30:00.000Z',
      signed_in_at: null,
      acr: null,
    })),
  });

/** The page's text without its tags, spaces collapsed. */
const textOf = (page: string): string =>
  page
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('a quorum on the call page', () => {
  it(verifies('quorum.console-progress', 'shows how many approvals of how many, who gave each and when'), () => {
    const one = executionPage(context, {
      execution: held(2, [{ by: 'fiona', group: 'finance' }]),
      refusal: null,
      flash: null,
    });
    expect(textOf(one)).toMatch(/Approvals 1 of 2 approvals: fiona, \S.*?Execution/);
    // This approval completes the quorum: it runs the call; the first of two does not.
    expect(one).toContain('>Approve and run</button>');
    expect(executionPage(context, { execution: held(2, []), refusal: null, flash: null })).toContain(
      '>Approve</button>',
    );
    const escalated = executionPage(context, {
      execution: held(3, [
        { by: 'fiona', group: 'finance' },
        { by: 'oskar', group: 'operations' },
      ]),
      refusal: null,
      flash: null,
    });
    expect(textOf(escalated)).toContain('2 of 3 approvals: fiona, ');
    expect(textOf(escalated)).toContain('; oskar (for operations), ');
    // A call one approver decides says nothing of a quorum.
    expect(executionPage(context, { execution: held(1, []), refusal: null, flash: null })).not.toContain('Approvals');
  });

  it(verifies('quorum.console-progress', 'offers no decision to someone who approved already, and says why'), () => {
    const page = executionPage(context, {
      execution: held(2, [{ by: 'farah', group: 'finance' }]),
      refusal: 'already_approved',
      flash: null,
    });
    expect(page).not.toContain('<form class="decision"');
    expect(page).toContain(refusalMessages.already_approved);
  });
});
