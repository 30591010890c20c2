import { describe, expect, it } from 'vitest';
import { agentFromClaims, defaultClaimNames } from '../../../shared/auth/agent.js';
import { verifies } from '../../support/requirements.js';

describe('agentFromClaims', () => {
  it(verifies('auth.agent-from-claims', 'reads id, groups and customer from the configured claims'), () => {
    expect(
      agentFromClaims(
        { client_id: 'support-agent', 'cognito:groups': '[support tier-2 support]', acting_for: 'customer-1042' },
        { agent: 'client_id', groups: 'cognito:groups', customer: 'acting_for' },
      ),
    ).toEqual({ id: 'support-agent', groups: ['support', 'tier-2'], customerId: 'customer-1042' });
  });

  it(verifies('auth.agent-from-claims', 'accepts a real list or a comma-separated list of groups'), () => {
    expect(agentFromClaims({ sub: 'a', groups: ['x', 'y'] }, defaultClaimNames)?.groups).toEqual(['x', 'y']);
    expect(agentFromClaims({ sub: 'a', groups: 'y, x' }, defaultClaimNames)?.groups).toEqual(['x', 'y']);
    expect(agentFromClaims({ sub: 'a' }, defaultClaimNames)).toEqual({ id: 'a', groups: [], customerId: null });
  });

  it(verifies('auth.agent-from-claims', 'finds no agent without the agent claim, or with an empty one'), () => {
    expect(agentFromClaims({ groups: '[finance]' }, defaultClaimNames)).toBeNull();
    expect(agentFromClaims({ sub: '   ' }, defaultClaimNames)).toBeNull();
    expect(agentFromClaims({ sub: 42 }, defaultClaimNames)).toBeNull();
  });

  it(verifies('auth.agent-from-claims', 'finds no agent when the customer claim is there but is not text'), () => {
    // Read as no customer, an agent acting for one would run as an inside agent (outside: false).
    for (const customer of [1042, true, ['customer-1042'], { id: 'customer-1042' }]) {
      expect(agentFromClaims({ sub: 'a', customer_id: customer }, defaultClaimNames), String(customer)).toBeNull();
    }
    expect(agentFromClaims({ sub: 'a', customer_id: null }, defaultClaimNames)?.customerId).toBeNull();
    expect(agentFromClaims({ sub: 'a', customer_id: '' }, defaultClaimNames)?.customerId).toBeNull();
  });
});
