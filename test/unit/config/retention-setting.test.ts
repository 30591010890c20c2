// settings.retention: how long a final call is kept, written as the file's other durations are.
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../shared/config/load.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import { verifies } from '../../support/requirements.js';

const file = 'gateway.config.yaml';
const settings = (...lines: string[]) => `settings:\n${lines.map((line) => `  ${line}`).join('\n')}\n`;
const load = (text: string) => loadConfigText(text, file, {});
const dayMs = 86_400_000;

describe('the retention setting', () => {
  it(verifies('ops.retention', 'is 400 days unless the configuration says otherwise, from 1d to 3650d'), () => {
    const unset = load(settings('enabled: true'));
    expect(unset.ok && unset.config.settings.retention).toBe(400 * dayMs);
    const shortest = load(settings('retention: 24h'));
    expect(shortest.ok && shortest.config.settings.retention).toBe(dayMs);
    const longest = load(settings('retention: 3650d'));
    expect(longest.ok && longest.config.settings.retention).toBe(3_650 * dayMs);
  });

  it.each(['23h', '3651d', '0d', 'forever', '400 days', '-1d', '12'])(
    verifies('ops.retention', 'refuses %s, naming the setting and its line'),
    (value) => {
      const loaded = load(settings('enabled: true', `retention: ${value}`));
      expect(loaded.ok).toBe(false);
      if (loaded.ok) return;
      expect(loaded.problems.map(formatProblem).join('\n')).toMatch(
        /gateway\.config\.yaml:3: settings\.retention: expected (a retention from 1d to 3650d|a duration such as 90s, 15m or 24h)/,
      );
    },
  );
});
