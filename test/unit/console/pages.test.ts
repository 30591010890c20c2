// The call page without a browser: what an approver reads is what is held, invisible characters
// marked and hidden secrets told apart from values that only read "[REDACTED]".
import { describe, expect, it } from 'vitest';
import { summarize } from '../../../shared/approvals/notifier.js';
import { executionPage, type PageContext } from '../../../shared/edge/console/pages.js';
import { noticeOf } from '../../../shared/use-cases/held-call-steps.js';
import { anExecution, humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';

const context: PageContext = {
  approver: { id: 'finance-approver', name: 'Farah', groups: ['finance'] },
  csrf: 'csrf-token',
  now: Date.now(),
};
const secretCell = '<em class="secret" title="a secret: hidden here, sent as the agent gave it">hidden (secret)</em>';
const row = (pointer: string, cell: string) => `<tr><th scope="row"><code>${pointer}</code></th><td>${cell}</td></tr>`;
const mark = (code: string) =>
  `<span class="hidden-char" title="an invisible or direction-changing character">${code}</span>`;
const pageOf = (overrides: Parameters<typeof anExecution>[0]) =>
  executionPage(context, { execution: anExecution(overrides), refusal: null, flash: null });

describe('the call page', () => {
  it(
    verifies('console.redacted-distinct', 'shows a hidden secret as one and a plain "[REDACTED]" as the text it is'),
    () => {
      const page = pageOf({
        arguments_json: '{"initial_password":"[REDACTED]","note":"[REDACTED]"}',
        sealed_arguments: 'sealed',
        secret_pointers: ['/initial_password'],
      });
      expect(page).toContain(row('/initial_password', secretCell));
      expect(page).toContain(row('/note', '<span class="string">[REDACTED]</span>'));
    },
  );

  it(
    verifies(
      'console.redacted-distinct',
      'on a record without pointers, a "[REDACTED]" in unsealed arguments is plain text',
    ),
    () => {
      const page = pageOf({ arguments_json: '{"note":"[REDACTED]"}', sealed_arguments: null, secret_pointers: null });
      expect(page).toContain(row('/note', '<span class="string">[REDACTED]</span>'));
      expect(page).not.toContain('class="secret"');
    },
  );

  it(
    verifies(
      'console.invisible-marked',
      'marks variation selectors, tag characters, fillers and blank symbols in values and names',
    ),
    () => {
      const hidden = 'Office chairs\u{e0049}\u{e0067}\u{e006e}\ufe0f\u3164\u2800';
      const page = pageOf({ arguments_json: JSON.stringify({ item: hidden, 'a\u17b4b': 'x\u115f' }) });
      expect(page).toContain(
        `<span class="string">Office chairs${mark('U+E0049')}${mark('U+E0067')}${mark('U+E006E')}${mark('U+FE0F')}${mark('U+3164')}${mark('U+2800')}</span>`,
      );
      expect(page).toContain(`<code>/a${mark('U+17B4')}b</code>`);
      expect(page).toContain(`x${mark('U+115F')}`);
      for (const character of ['\u{e0049}', '\ufe0f', '\u3164', '\u2800', '\u17b4', '\u115f']) {
        expect(page).not.toContain(character);
      }
    },
  );

  it(verifies('settle.audit', 'shows who settled an unknown outcome, when, as what and why, escaped'), () => {
    const page = pageOf({
      status: 'succeeded',
      settlement: {
        outcome: 'succeeded',
        by: 'arn:aws:sts::123456789012:assumed-role/ops/alice',
        at: '2026-12-03T06:00:00.000Z',
        reason: 'PO-9 is in the ERP <script>',
        unknown_code: 'timeout',
      },
    });
    expect(page).toContain(
      '<dt>Outcome settled</dt><dd>was unknown (<code>timeout</code>); settled as succeeded by arn:aws:sts::123456789012:assumed-role/ops/alice, <time datetime="2026-12-03T06:00:00.000Z">2026-12-03 06:00:00 UTC</time>: PO-9 is in the ERP &lt;script&gt;</dd>',
    );
    expect(pageOf({ status: 'succeeded' })).not.toContain('Outcome settled');
  });

  it(verifies('console.invisible-marked', 'marks invisible characters in the reason a rejecting approver gave'), () => {
    const page = pageOf({ status: 'rejected', decision_note: 'Budget\u200b frozen' });
    expect(page).toContain(`<dd>Budget${mark('U+200B')} frozen</dd>`);
  });
});

describe("the agent's recent calls on the call page", () => {
  it(
    verifies('console.recent-calls', 'lists when each ended how and with which code, and nothing of its arguments'),
    () => {
      const earlier = anExecution({
        status: 'rejected',
        code: 'rejected',
        created_at: '2026-11-30T09:00:00.000Z',
        arguments_json: '{"amount":"99999","currency":"EUR"}',
      });
      const page = executionPage(context, {
        execution: anExecution({}),
        refusal: null,
        flash: null,
        recent: [earlier],
      });
      expect(page).toContain('<h2>Recent calls of this tool by procurement-agent</h2>');
      expect(page).toContain('<td class="status-rejected">');
      expect(page).toContain('<code>rejected</code>');
      expect(page).not.toContain('99999');
    },
  );

  it(verifies('console.recent-calls', 'shows no section when the agent has no other call of the tool'), () => {
    expect(pageOf({})).not.toContain('Recent calls');
    expect(
      executionPage(context, { execution: anExecution({}), refusal: null, flash: null, recent: [] }),
    ).not.toContain('Recent calls');
  });
});

describe('the notice summary', () => {
  it(
    verifies(
      ['console.redacted-distinct', 'notify.no-secrets'],
      'reads a hidden secret as "[REDACTED]" and writes a look-alike escaped',
    ),
    () => {
      const execution = anExecution({
        arguments_json: '{"initial_password":"[REDACTED]","note":"[REDACTED]"}',
        sealed_arguments: 'sealed',
        secret_pointers: ['/initial_password'],
      });
      const { summary } = noticeOf({ consoleUrl: (id) => `https://gw.example/console/executions/${id}` }, execution);
      expect(summary).toBe('{"initial_password":"[REDACTED]","note":"\\u005bREDACTED]"}');
    },
  );

  it(
    verifies(
      'console.invisible-marked',
      'writes invisible characters as \\u escapes, so the summary reads what is held',
    ),
    () => {
      const held = { item: 'Office chairs\u{e0049}\u{e0067}\ufe0f\u2800' };
      const summary = summarize(JSON.stringify(held));
      expect(summary).toBe('{"item":"Office chairs\\udb40\\udc49\\udb40\\udc67\\ufe0f\\u2800"}');
      expect(JSON.parse(summary)).toEqual(held);
    },
  );
});

describe('escalation on the call page', () => {
  const created = Date.parse('2026-12-03T08:00:00.000Z');
  const escalating = {
    created_at: new Date(created).toISOString(),
    expires_at: '2026-12-04T08:00:00.000Z',
    decision: {
      effect: 'allow' as const,
      reason: null,
      determining: [],
      step: humanStep(
        { staff: 'finance', customer: false },
        { escalation: { after_ms: 4 * 3_600_000, group: 'operations' } },
      ),
      config_version: 'v1',
    },
  };
  const pageAt = (now: number, overrides: Parameters<typeof anExecution>[0] = {}) =>
    executionPage(
      { ...context, now },
      { execution: anExecution({ ...escalating, ...overrides }), refusal: null, flash: null },
    );

  it(verifies('escalation.shown', 'says when a waiting call will escalate, and to which group'), () => {
    expect(pageAt(created + 3_600_000)).toContain(
      '<dt>Escalation</dt><dd>Escalates to operations at <time datetime="2026-12-03T12:00:00.000Z">2026-12-03 12:00:00 UTC</time> <span class="muted">(in 3 h 00 min, if nobody decides by then)</span></dd>',
    );
  });

  it(verifies('escalation.shown', 'says to which group and when a call was escalated'), () => {
    const page = pageAt(created + 5 * 3_600_000, { escalated_at: '2026-12-03T12:00:30.000Z' });
    expect(page).toContain(
      '<dt>Escalation</dt><dd>Escalated to operations at <time datetime="2026-12-03T12:00:30.000Z">2026-12-03 12:00:30 UTC</time></dd>',
    );
    // Past its time and not yet recorded by the pass: escalated all the same (the group may decide).
    expect(pageAt(created + 4 * 3_600_000)).toContain(
      'Escalated to operations at <time datetime="2026-12-03T12:00:00.000Z">',
    );
    // Decided before its time: nothing to say.
    expect(pageAt(created + 5 * 3_600_000, { status: 'rejected' })).not.toContain('<dt>Escalation</dt>');
  });
});
