// The four annotations of a high-stakes staff approval (@quorum, @escalate, @reauth, @acr), read
// when the configuration loads: each accepted spelling as the human step a call gets, and each
// refusal with its file, line and message.
import { describe, expect, it } from 'vitest';
import type { ConfigProblem } from '../../../shared/config/resolved.js';
import type { HumanStep } from '../../../shared/policy/human-step.js';
import { anAgent } from '../../support/agents.js';
import { humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';
import { lines, loadedShop, refusedShop, toolNamed } from './policy-fixtures.js';

const problem = (line: number, message: string): ConfigProblem => ({
  file: 'a.cedar',
  path: 'policies',
  line,
  message,
});

const staffPermit = ['@approval("staff")', '@approvers("finance")'];
const permit = 'permit (principal, action == Action::"shop.look", resource);';

/** The human step shop.look gets under one staff permit with these annotations. */
const stepWith = async (...annotations: string[]): Promise<HumanStep | null> => {
  const snapshot = await loadedShop({ 'a.cedar': lines(...staffPermit, ...annotations, permit) });
  const decision = snapshot.policy.decide(anAgent('a', []), toolNamed(snapshot, 'shop.look'), {});
  if (decision.kind !== 'allow') throw new Error(`expected the call to be allowed, got ${decision.reason}`);
  return decision.step;
};

/** The problems of a.cedar, whose first policy starts on line 1. */
const refused = (...text: string[]): Promise<ConfigProblem[]> => refusedShop({ 'a.cedar': lines(...text) });

describe('accepted forms', () => {
  it(verifies('annotations.parsed', 'reads a quorum of 2 to 10, spaces allowed'), async () => {
    expect(await stepWith('@quorum("2")')).toEqual(humanStep({ staff: 'finance', customer: false }, { quorum: 2 }));
    expect((await stepWith('@quorum(" 10 ")'))?.quorum).toBe(10);
  });

  it(verifies('annotations.parsed', 'reads an escalation as a time and a group, by comma or space'), async () => {
    const escalation = { after_ms: 4 * 3_600_000, group: 'operations' };
    expect((await stepWith('@escalate("4h, operations")'))?.escalation).toEqual(escalation);
    expect((await stepWith('@escalate("4h operations")'))?.escalation).toEqual(escalation);
    expect((await stepWith('@escalate(" 90m,ops.team-2 ")'))?.escalation).toEqual({
      after_ms: 90 * 60_000,
      group: 'ops.team-2',
    });
  });

  it(verifies('annotations.parsed', 'reads a re-sign-in time and the sign-in classes'), async () => {
    expect((await stepWith('@reauth("5m")'))?.reauth_ms).toBe(300_000);
    expect((await stepWith('@reauth("30s")'))?.reauth_ms).toBe(30_000);
    expect((await stepWith('@acr("phr")'))?.acr).toEqual(['phr']);
    expect((await stepWith('@acr("phr, phrh urn:mace:incommon:iap:silver")'))?.acr).toEqual([
      'phr',
      'phrh',
      'urn:mace:incommon:iap:silver',
    ]);
  });

  it(verifies('annotations.parsed', 'carries all four into the step, with the customer step too'), async () => {
    const snapshot = await loadedShop({
      'a.cedar': lines(
        '@approval("staff, customer")',
        '@approvers("finance")',
        '@quorum("3")',
        '@escalate("1d, operations")',
        '@reauth("10m")',
        '@acr("phrh")',
        permit,
      ),
    });
    const decision = snapshot.policy.decide(anAgent('a', [], 'c-1'), toolNamed(snapshot, 'shop.look'), {});
    expect(decision.kind === 'allow' ? decision.step : null).toEqual({
      staff: 'finance',
      customer: true,
      quorum: 3,
      escalation: { after_ms: 86_400_000, group: 'operations' },
      reauth_ms: 600_000,
      acr: ['phrh'],
    });
  });
});

describe('refusals, at the policy', () => {
  it(verifies('annotations.parsed', 'refuses a quorum that is not a whole number from 2 to 10'), async () => {
    const quorumMessage = (value: string) =>
      `@quorum("${value}"): expected how many distinct approvers must approve, 2 to 10 (one approver is the default: drop @quorum)`;
    for (const value of ['1', '0', '11', 'two', '2.5', '-2', '']) {
      expect(await refused('// high stakes', ...staffPermit, `@quorum("${value}")`, permit)).toEqual([
        problem(2, quorumMessage(value)),
      ]);
    }
  });

  it(
    verifies('annotations.parsed', 'refuses an escalation without a group, with a bad time, or to the deciders'),
    async () => {
      const shape = (value: string) =>
        `@escalate("${value}"): expected a time and a group, such as @escalate("4h, operations")`;
      for (const value of ['4h', 'operations', 'soon, operations', '0m, operations', '4h, operations, security']) {
        expect(await refused(...staffPermit, `@escalate("${value}")`, permit)).toEqual([problem(1, shape(value))]);
      }
      expect(await refused(permit, ...staffPermit, '@escalate("4h, finance")', permit)).toEqual([
        problem(2, '@escalate("4h, finance"): finance decides already (@approvers); name another group'),
      ]);
    },
  );

  it(verifies('annotations.parsed', 'refuses a re-sign-in time that is not a duration'), async () => {
    for (const value of ['5', 'five minutes', '0s', '']) {
      expect(await refused(...staffPermit, `@reauth("${value}")`, permit)).toEqual([
        problem(1, `@reauth("${value}"): expected how recent the approver's sign-in must be, such as @reauth("5m")`),
      ]);
    }
  });

  it(verifies('annotations.parsed', 'refuses @acr naming no sign-in class, quoting what was written'), async () => {
    for (const value of ['', ' , ']) {
      expect(await refused(...staffPermit, `@acr("${value}")`, permit)).toEqual([
        problem(
          1,
          `@acr("${value}") names no value; expected the sign-in classes that may decide, such as @acr("phr, phrh")`,
        ),
      ]);
    }
  });

  it(verifies('annotations.parsed', 'refuses any of the four without a staff approval'), async () => {
    expect(await refused('@quorum("2")', permit)).toEqual([
      problem(1, '@quorum asks more of a staff approval; add @approval("staff") and @approvers("<group>")'),
    ]);
    expect(await refused(permit, '@approval("customer")', '@reauth("5m")', '@acr("phr")', permit)).toEqual([
      problem(2, '@reauth, @acr ask more of a staff approval; add @approval("staff") and @approvers("<group>")'),
    ]);
    expect(await refused('@escalate("4h, operations")', permit)).toEqual([
      problem(1, '@escalate asks more of a staff approval; add @approval("staff") and @approvers("<group>")'),
    ]);
  });

  it(verifies('annotations.parsed', 'refuses them on a forbid, which is never approved'), async () => {
    expect(await refused(permit, '@quorum("2")', 'forbid (principal, action, resource);')).toEqual([
      problem(2, '@quorum asks more of a staff approval; they belong on permit policies'),
    ]);
    // On a forbid that also carries @approval and @approvers, the forbid's refusal names all of them.
    expect(await refused(permit, ...staffPermit, '@reauth("5m")', 'forbid (principal, action, resource);')).toEqual([
      problem(2, '@approval and @approvers belong on permit policies; a forbid is never approved'),
      problem(2, '@reauth asks more of a staff approval; they belong on permit policies'),
    ]);
  });

  it(verifies('annotations.parsed', 'reports every bad annotation of a policy, each at its policy'), async () => {
    expect(
      await refused(
        permit,
        '',
        ...staffPermit,
        '@quorum("1")',
        '@escalate("later")',
        '@reauth("now")',
        '@acr("")',
        permit,
      ),
    ).toEqual([
      problem(
        3,
        '@quorum("1"): expected how many distinct approvers must approve, 2 to 10 (one approver is the default: drop @quorum)',
      ),
      problem(3, '@escalate("later"): expected a time and a group, such as @escalate("4h, operations")'),
      problem(3, '@reauth("now"): expected how recent the approver\'s sign-in must be, such as @reauth("5m")'),
      problem(3, '@acr("") names no value; expected the sign-in classes that may decide, such as @acr("phr, phrh")'),
    ]);
  });

  it(
    verifies(
      'annotations.misspelt',
      'refuses a misspelt human-step annotation, which would ask less, naming the one meant',
    ),
    async () => {
      const meant = (name: string, known: string) =>
        `@${name} is not an annotation the gateway reads; did you mean @${known}?`;
      expect(
        await refused(
          ...staffPermit,
          '@quorom("2")',
          '@escalation("4h, operations")',
          '@Reauth("5m")',
          '@ACR("phr")',
          '@approver("finance")',
          permit,
        ),
      ).toEqual([
        // In the order Cedar lists annotations: by name.
        problem(1, meant('ACR', 'acr')),
        problem(1, meant('Reauth', 'reauth')),
        problem(1, meant('approver', 'approvers')),
        problem(1, meant('escalation', 'escalate')),
        problem(1, meant('quorom', 'quorum')),
      ]);
      expect(await refused('@re_auth("5m")', '@approvals("staff")', permit)).toEqual([
        problem(1, meant('approvals', 'approval')),
        problem(1, meant('re_auth', 'reauth')),
      ]);
      // An organization's own annotations stay its own.
      expect(
        (await stepWith('@owner("finance-ops")', '@reason("four eyes")', '@quota("2")', '@approved_by("cfo")'))?.quorum,
      ).toBe(1);
    },
  );
});
