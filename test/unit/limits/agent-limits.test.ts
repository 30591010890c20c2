// Which limits apply to an agent, and how the configuration refuses bad ones.
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../shared/config/load.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import { Limits } from '../../../shared/config/schema.js';
import { limitsFor } from '../../../shared/limits/agent-limits.js';
import { verifies } from '../../support/requirements.js';

const limitsOf = (text: string) => {
  const result = loadConfigText(text, 'gateway.config.yaml', {});
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
  return result.config.settings.limits;
};

const problemsOf = (text: string) => {
  const result = loadConfigText(text, 'gateway.config.yaml', {});
  if (result.ok) throw new Error('expected the configuration to be refused');
  return result.problems.map(formatProblem);
};

describe('limitsFor', () => {
  it(verifies('limits.configuration', 'gives every agent the defaults when nothing is configured'), () => {
    expect(limitsFor(Limits.parse({}), { id: 'any-agent', groups: [] })).toEqual({
      concurrentRequests: 32,
      requestsPerSecond: 50,
      burst: 100,
      pendingCalls: 100,
      requestBytesPerSecond: 1_048_576,
      requestBytesPerDay: 1_073_741_824,
    });
  });

  it(
    verifies(
      'limits.configuration',
      'takes, per limit, the agent’s own setting, else the highest of its groups, else the default',
    ),
    () => {
      const limits = limitsOf(
        [
          'settings:',
          '  limits:',
          '    concurrent_requests: 4',
          '    requests_per_second: 5',
          '    burst: 10',
          '    pending_calls: 20',
          '    groups:',
          '      batch: { requests_per_second: 100, burst: 200 }',
          '      finance: { requests_per_second: 10, pending_calls: 50 }',
          '    agents:',
          '      reporting-agent: { requests_per_second: 2 }',
          '',
        ].join('\n'),
      );
      expect(limitsFor(limits, { id: 'plain-agent', groups: ['support'] })).toEqual({
        concurrentRequests: 4,
        requestsPerSecond: 5,
        burst: 10,
        pendingCalls: 20,
        requestBytesPerSecond: 1_048_576,
        requestBytesPerDay: 1_073_741_824,
      });
      expect(limitsFor(limits, { id: 'both-agent', groups: ['finance', 'batch'] })).toEqual({
        concurrentRequests: 4,
        requestsPerSecond: 100,
        burst: 200,
        pendingCalls: 50,
        requestBytesPerSecond: 1_048_576,
        requestBytesPerDay: 1_073_741_824,
      });
      expect(limitsFor(limits, { id: 'reporting-agent', groups: ['batch'] })).toEqual({
        concurrentRequests: 4,
        requestsPerSecond: 2,
        burst: 200,
        pendingCalls: 20,
        requestBytesPerSecond: 1_048_576,
        requestBytesPerDay: 1_073_741_824,
      });
      // Names are looked up as data, never as inherited properties.
      expect(limitsFor(limits, { id: '__proto__', groups: ['constructor', 'toString'] })).toEqual(
        limitsFor(limits, { id: 'plain-agent', groups: [] }),
      );
    },
  );

  it(verifies('limits.configuration', 'refuses bad limits with the file, line, field and value'), () => {
    expect(
      problemsOf(
        [
          'settings:',
          '  limits:',
          '    concurrent_requests: 0',
          '    requests_per_second: -1',
          '    burst: 2.5',
          '    pending_calls: 5000',
          '    agents:',
          '      some-agent: { pending_calls: many, speed: 3 }',
          '',
        ].join('\n'),
      ),
    ).toEqual([
      expect.stringMatching(
        /^gateway\.config\.yaml:3: settings\.limits\.concurrent_requests: expected concurrent_requests of at least 1 .*0/,
      ),
      expect.stringMatching(
        /^gateway\.config\.yaml:4: settings\.limits\.requests_per_second: expected requests_per_second above 0 .*-1/,
      ),
      expect.stringMatching(
        /^gateway\.config\.yaml:5: settings\.limits\.burst: expected burst as a whole number .*2\.5/,
      ),
      expect.stringMatching(
        /^gateway\.config\.yaml:6: settings\.limits\.pending_calls: expected pending_calls of at most 1000 .*5000/,
      ),
      expect.stringMatching(
        /^gateway\.config\.yaml:8: settings\.limits\.agents\.some-agent\.pending_calls: expected pending_calls as a whole number/,
      ),
      expect.stringMatching(/^gateway\.config\.yaml:8: settings\.limits\.agents\.some-agent.*speed/),
    ]);
  });
});
