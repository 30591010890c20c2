// The approval settings of an environment's configuration: the approval time's bounds and the
// webhooks held calls are announced to.
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../shared/config/load.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import { approvalTimeoutSeconds } from '../../../shared/use-cases/approval-time.js';
import { verifies } from '../../support/requirements.js';

const file = 'gateway.config.yaml';
const settings = (...lines: string[]) => `settings:\n${lines.map((line) => `  ${line}`).join('\n')}\n`;

const load = (text: string, environment: Record<string, string> = {}) => loadConfigText(text, file, environment);

describe('the approval time', () => {
  it(
    verifies('approvals.approval-time-setting', 'is 24 hours unless the environment’s configuration says otherwise'),
    () => {
      const loaded = load(settings('enabled: true'));
      expect(loaded.ok && loaded.config.settings.approval_time).toBe(24 * 3_600_000);
      const short = load(settings('approval_time: 90s'));
      expect(short.ok && short.config.settings.approval_time).toBe(90_000);
      const longest = load(settings('approval_time: 14d'));
      expect(longest.ok && longest.config.settings.approval_time).toBe(14 * 86_400_000);
    },
  );

  it.each(['500ms', '15d', '0s', 'soon', '-1h'])(
    verifies('approvals.approval-time-setting', 'refuses %s, naming the setting and its line'),
    (value) => {
      const loaded = load(settings('enabled: true', `approval_time: ${value}`));
      expect(loaded.ok).toBe(false);
      if (loaded.ok) return;
      expect(loaded.problems.map(formatProblem).join('\n')).toMatch(
        /gateway\.config\.yaml:3: settings\.approval_time: expected (an approval time from 1s to 14d|a duration such as 90s, 15m or 24h)/,
      );
    },
  );

  it(
    verifies(
      'approvals.approval-time-setting',
      'the approval run waits the remaining time in whole seconds, rounded up, at least one',
    ),
    () => {
      const expiresAt = '2026-11-29T12:00:10.000Z';
      expect(approvalTimeoutSeconds({ expires_at: expiresAt }, Date.parse('2026-11-29T12:00:00.000Z'))).toBe(10);
      expect(approvalTimeoutSeconds({ expires_at: expiresAt }, Date.parse('2026-11-29T12:00:00.001Z'))).toBe(10);
      expect(approvalTimeoutSeconds({ expires_at: expiresAt }, Date.parse('2026-11-29T12:00:09.999Z'))).toBe(1);
      expect(approvalTimeoutSeconds({ expires_at: expiresAt }, Date.parse('2026-11-29T13:00:00.000Z'))).toBe(1);
    },
  );
});

describe('webhooks', () => {
  it(
    verifies(
      'notify.channels',
      'are listed in the settings, with the Slack-style text on by default; URLs may come from the environment',
    ),
    () => {
      const loaded = load(
        settings(
          'notifications:',
          '  webhooks:',
          '    - url: https://hooks.example/approvals',
          '    - url: ${env:CHAT_WEBHOOK}',
          '      text: false',
        ),
        { CHAT_WEBHOOK: 'https://chat.example/hook/T0K3N' },
      );
      expect(loaded.ok).toBe(true);
      if (!loaded.ok) return;
      expect(loaded.config.settings.notifications.webhooks).toEqual([
        { url: 'https://hooks.example/approvals', text: true },
        { url: 'https://chat.example/hook/T0K3N', text: false },
      ]);
    },
  );

  it(
    verifies(
      'notify.no-secrets',
      'a webhook URL that is not http(s) is refused without repeating it (it may hold a token)',
    ),
    () => {
      const loaded = load(settings('notifications:', '  webhooks:', '    - url: ${env:CHAT_WEBHOOK}'), {
        CHAT_WEBHOOK: 'ftp://chat.example/hook/S3CRET',
      });
      expect(loaded.ok).toBe(false);
      if (loaded.ok) return;
      const text = loaded.problems.map(formatProblem).join('\n');
      expect(text).toContain('settings.notifications.webhooks[0].url: expected an http(s) URL');
      expect(text).not.toContain('S3CRET');
    },
  );
});
