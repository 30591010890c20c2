// What a system may be allowed, bounded by what the gateway can keep and by when its functions must
// answer: max_response_size beside the record's other fields, and timeout within a function's time.
import { describe, expect, it } from 'vitest';
import { directCallTimeoutWarnings } from '../../../shared/config/checks.js';
import { loadConfigText } from '../../../shared/config/load.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import { maxResponseSizeCeiling } from '../../../shared/executions/record-size.js';
import { boundedTimeoutMs, directCallLimitMs, outcomeMarginMs } from '../../../shared/invoke/time-budget.js';
import { callTool } from '../../../shared/use-cases/call-tool.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';
import { argumentsOf, procurementAgent, tools, useCaseBed } from '../../support/use-case-bed.js';

const file = 'gateway.config.yaml';
const system = (...lines: string[]) =>
  [
    'systems:',
    '  - key: erp',
    '    base_url: https://erp.example.com',
    '    operations:',
    '      - { id: orders.list, method: GET, path: /orders, description: Lists orders. }',
    ...lines.map((line) => `    ${line}`),
  ].join('\n');
const load = (text: string) => loadConfigText(`policies: []\n${text}\n`, file, {});

describe("a system's max_response_size", () => {
  it(verifies('deploy.stored-result-bounded', 'defaults to the ceiling, 200KB, and takes anything up to it'), () => {
    expect(maxResponseSizeCeiling).toBe(200 * 1024);
    const unset = load(system());
    expect(unset.ok && unset.config.systems[0]?.max_response_size).toBe(200 * 1024);
    const largest = load(system('max_response_size: 200KB'));
    expect(largest.ok && largest.config.systems[0]?.max_response_size).toBe(200 * 1024);
  });

  it.each(['201KB', '256KB', '1MB'])(
    verifies('deploy.stored-result-bounded', 'refuses %s, naming the system, its line and the limit'),
    (size) => {
      const loaded = load(system(`max_response_size: ${size}`));
      expect(loaded.ok).toBe(false);
      if (loaded.ok) return;
      expect(loaded.problems.map(formatProblem).join('\n')).toMatch(
        /^gateway\.config\.yaml:7: systems\[0\]\.max_response_size: at most 200KB: .*400 KB/,
      );
    },
  );
});

describe("a system's timeout against the functions' own limits", () => {
  it(
    verifies('deploy.timeout-bounded', 'config:check names each system whose timeout exceeds a direct call in AWS'),
    async () => {
      const snapshot = await snapshotOf(
        [
          'systems:',
          '  - key: quick',
          '    base_url: http://127.0.0.1:9',
          `    timeout: ${directCallLimitMs / 1000}s`,
          '    operations:',
          '      - { id: a.get, method: GET, path: /a, description: Reads a. }',
          '  - key: slow',
          '    base_url: http://127.0.0.1:9',
          '    timeout: 60s',
          '    operations:',
          '      - { id: b.get, method: GET, path: /b, description: Reads b. }',
          'policies: []',
        ].join('\n'),
        { file: 'org/gateway.yaml' },
      );
      expect(directCallLimitMs).toBe(27_000);
      expect(directCallTimeoutWarnings(snapshot, 'org/gateway.yaml')).toEqual([
        {
          file: 'org/gateway.yaml',
          path: 'systems[1].timeout',
          line: 7,
          message: expect.stringMatching(
            /^slow: a timeout of 60s is longer than a direct call may take in AWS \(27s: /,
          ),
        },
      ]);
    },
  );

  it(
    verifies('deploy.timeout-bounded', "cuts a call's deadline to what the running function has left, less the margin"),
    async () => {
      expect(boundedTimeoutMs(10_000, null)).toBe(10_000);
      expect(boundedTimeoutMs(10_000, 60_000)).toBe(10_000);
      expect(boundedTimeoutMs(60_000, 29_000)).toBe(29_000 - outcomeMarginMs);
      expect(boundedTimeoutMs(60_000, 1_000)).toBe(1);
      // Through a direct call: the system is asked with the bounded deadline.
      const bed = await useCaseBed();
      const deps = { ...bed.deps, timeLeftMs: () => 3_500 };
      const result = await callTool(deps, procurementAgent, tools.list, argumentsOf({ vendor: 'acme' }));
      expect(result.status).toBe('succeeded');
      expect(bed.sent.map((request) => request.deadlineMs)).toEqual([3_500 - outcomeMarginMs]);
    },
  );
});
