import { describe, expect, it } from 'vitest';
import { callerFromClaims, identify, type ListedAgent } from '../../../shared/auth/agent.js';
import { verifies } from '../../support/requirements.js';

const outside = { agent: 'sub', groups: 'groups', customer: 'customer_id' };
const cognito = { agent: 'client_id', groups: null, customer: null };

describe('callerFromClaims', () => {
  it(verifies('auth.agent-from-claims', 'reads the subject, and groups and customer from the claims named'), () => {
    expect(
      callerFromClaims(
        {
          client_id: 'support-agent',
          'cognito:groups': '[support tier-2 support]',
          acting_for: 'customer-1042',
          exp: 9,
        },
        { agent: 'client_id', groups: 'cognito:groups', customer: 'acting_for' },
      ),
    ).toEqual({
      kind: 'token',
      subject: 'support-agent',
      groups: ['support', 'tier-2'],
      customerId: 'customer-1042',
      expiresAt: 9,
    });
  });

  it(verifies('agents.identity-from-config', 'reads no groups or customer claim the deployment does not name'), () => {
    expect(callerFromClaims({ client_id: 'c1', groups: ['admins'], customer_id: 'customer-7' }, cognito)).toEqual({
      kind: 'token',
      subject: 'c1',
      groups: [],
      customerId: null,
      expiresAt: null,
    });
  });

  it(verifies('auth.agent-from-claims', 'accepts a real list or a comma-separated list of groups'), () => {
    expect(callerFromClaims({ sub: 'a', groups: ['x', 'y'] }, outside)).toMatchObject({ groups: ['x', 'y'] });
    expect(callerFromClaims({ sub: 'a', groups: 'y, x' }, outside)).toMatchObject({ groups: ['x', 'y'] });
  });

  it(verifies('auth.agent-from-claims', 'finds no caller without the subject claim, or with an empty one'), () => {
    expect(callerFromClaims({ groups: '[finance]' }, outside)).toBeNull();
    expect(callerFromClaims({ sub: '   ' }, outside)).toBeNull();
    expect(callerFromClaims({ sub: 42 }, outside)).toBeNull();
  });

  it(verifies('auth.agent-from-claims', 'finds no caller when a customer claim read is there but is not text'), () => {
    // Read as no customer, an agent acting for one would run as an inside agent (outside: false).
    for (const customer of [1042, true, ['customer-1042'], { id: 'customer-1042' }]) {
      expect(callerFromClaims({ sub: 'a', customer_id: customer }, outside), String(customer)).toBeNull();
    }
    expect(callerFromClaims({ sub: 'a', customer_id: null }, outside)).toMatchObject({ customerId: null });
    expect(callerFromClaims({ sub: 'a', customer_id: '' }, outside)).toMatchObject({ customerId: null });
  });
});

describe('identify', () => {
  const agents: ListedAgent[] = [
    { id: 'billing-agent', subject: '1example23456789abcdefghij', groups: ['finance', 'billing'], customer: null },
    { id: 'support-agent', subject: 'auth0|support', groups: ['support'], customer: 'customer-1042' },
    { id: 'local-only', subject: null, groups: ['procurement'], customer: null },
  ];
  const now = 1_800_000_000_000;
  const token = (subject: string, claimed: { groups?: string[]; customerId?: string | null } = {}) => ({
    kind: 'token' as const,
    subject,
    groups: claimed.groups ?? [],
    customerId: claimed.customerId ?? null,
    expiresAt: now / 1000 + 60,
  });

  it(verifies('agents.identity-from-config', "gives a listed subject its entry's id, groups and customer"), () => {
    expect(identify(token('1example23456789abcdefghij'), agents, now)).toEqual({
      id: 'billing-agent',
      groups: ['billing', 'finance'],
      customerId: null,
    });
    expect(identify(token('auth0|support'), agents, now)).toEqual({
      id: 'support-agent',
      groups: ['support'],
      customerId: 'customer-1042',
    });
  });

  it(verifies('agents.identity-from-config', "lets no claim of a listed subject's token speak over its entry"), () => {
    // The token claims more groups and a customer: the entry decides.
    const claimed = token('1example23456789abcdefghij', { groups: ['admins'], customerId: 'customer-9' });
    expect(identify(claimed, agents, now)).toEqual({
      id: 'billing-agent',
      groups: ['billing', 'finance'],
      customerId: null,
    });
  });

  it(
    verifies('agents.identity-from-config', 'makes an unlisted subject an agent of that id with what its claims say'),
    () => {
      expect(identify(token('new-client'), agents, now)).toEqual({ id: 'new-client', groups: [], customerId: null });
      expect(identify(token('outsider', { groups: ['support'], customerId: 'c-1' }), agents, now)).toEqual({
        id: 'outsider',
        groups: ['support'],
        customerId: 'c-1',
      });
    },
  );

  it(verifies('agents.identity-from-config', "refuses an unlisted subject that spells a listed agent's id"), () => {
    // Else a token whose `sub` is "billing-agent" would read billing-agent's calls and share its limits.
    expect(identify(token('billing-agent'), agents, now)).toBeNull();
    expect(identify(token('local-only'), agents, now)).toBeNull();
  });

  it(verifies('agents.unauthorized-challenge', 'refuses a token caller past its expiry'), () => {
    expect(identify({ ...token('new-client'), expiresAt: now / 1000 }, agents, now)).toBeNull();
    expect(identify({ ...token('new-client'), expiresAt: null }, agents, now)).toMatchObject({ id: 'new-client' });
  });

  it(
    verifies('agents.identity-from-config', "finds a local token's entry by its id, and nothing once it is gone"),
    () => {
      expect(identify({ kind: 'listed', agentId: 'local-only' }, agents, now)).toEqual({
        id: 'local-only',
        groups: ['procurement'],
        customerId: null,
      });
      expect(identify({ kind: 'listed', agentId: 'removed-agent' }, agents, now)).toBeNull();
    },
  );
});
