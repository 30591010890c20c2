// What a system may be allowed in the configuration, bounded by what the gateway can keep and by
// when its functions must answer: max_response_size beside the record's other fields.
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../shared/config/load.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import { maxResponseSizeCeiling } from '../../../shared/executions/record-size.js';
import { verifies } from '../../support/requirements.js';

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
