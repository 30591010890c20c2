// From tools/call to the console page and the notice: a held call keeps where its secrets were
// hidden, so a plain field that reads "[REDACTED]" is shown as that text and a secret as hidden.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArguments } from '../../../shared/arguments/strict-json.js';
import type { GatewaySnapshot } from '../../../shared/control-plane/gateway-snapshot.js';
import { customerCallPage } from '../../../shared/edge/console/customer-pages.js';
import { executionPage } from '../../../shared/edge/console/pages.js';
import { callTool } from '../../../shared/use-cases/call-tool.js';
import { noticeOf } from '../../../shared/use-cases/held-call-steps.js';
import { anAgent } from '../../support/agents.js';
import { heldPortalConfig, holdingDepsFor } from '../../support/approval-deps.js';
import { ManualClock } from '../../support/clock.js';
import { startTestStore, type TestStore } from '../../support/local-store.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';

const portal = heldPortalConfig(
  '{ note: { type: string }, first_password: { type: string }, pin: { type: string, x-sensitive: true } }',
);

let local: TestStore;
beforeAll(async () => {
  local = await startTestStore(null, 'held-call-secrets');
});
afterAll(async () => {
  await local?.close();
});

/** Holds one call of the portal's tool with these arguments (JSON text) and reads back its record. */
const heldRecord = async (snapshot: GatewaySnapshot, clock: ManualClock, argumentsJson: string) => {
  const result = await callTool(
    holdingDepsFor(local.store, clock, snapshot),
    anAgent('agent-1', ['staff']),
    'portal.logins.create',
    readArguments(argumentsJson, []) ?? expect.unreachable(),
  );
  expect(result.status).toBe('pending_approval');
  return (await local.store.get(result.execution_id ?? '')) ?? expect.unreachable();
};

describe('a held call with a look-alike and real secrets', () => {
  it(
    verifies(
      'console.redacted-distinct',
      'keeps the secrets’ pointers; the page and the notice tell them from a plain "[REDACTED]"',
    ),
    async () => {
      const snapshot = await snapshotOf(portal.text, { files: portal.files });
      const clock = new ManualClock();
      const execution = await heldRecord(
        snapshot,
        clock,
        '{"note":"[REDACTED]","first_password":"Pa55-word","pin":"[REDACTED]"}',
      );
      expect(execution.secret_pointers).toEqual(['/first_password', '/pin']);
      expect(execution.arguments_json).toBe('{"first_password":"[REDACTED]","note":"[REDACTED]","pin":"[REDACTED]"}');

      const page = executionPage(
        { approver: { id: 'f', name: null, groups: ['finance'] }, csrf: 'c', now: clock.now() },
        { execution, refusal: null, flash: null },
      );
      expect(page).toContain('<code>/note</code></th><td><span class="string">[REDACTED]</span>');
      expect(page).toMatch(/<code>\/first_password<\/code><\/th><td><em class="secret"[^>]*>hidden \(secret\)<\/em>/);
      expect(page).toMatch(/<code>\/pin<\/code><\/th><td><em class="secret"[^>]*>hidden \(secret\)<\/em>/);
      expect(page).not.toContain('Pa55-word');

      const notice = noticeOf({ consoleUrl: (id) => `http://127.0.0.1/console/executions/${id}` }, execution);
      expect(notice.summary).toBe('{"first_password":"[REDACTED]","note":"\\u005bREDACTED]","pin":"[REDACTED]"}');
    },
  );
});

/** A login carried as JSON text in a string; its contentSchema marks the password inside. */
const jsonLogin = heldPortalConfig(
  '{ note: { type: string }, login: { type: string, contentMediaType: application/json, contentSchema: { type: object, properties: { user: { type: string }, code: { type: string, format: password } } } } }',
);

describe('a held call whose string carries JSON with a secret (contentSchema)', () => {
  it(
    verifies(
      'secrets.content-schema',
      'hides the string whole on the page, the customer page and in the notice, and seals it at rest',
    ),
    async () => {
      const snapshot = await snapshotOf(jsonLogin.text, { files: jsonLogin.files });
      const clock = new ManualClock();
      const login = JSON.stringify({ user: 'u-1', code: 'Hunter-22' });
      const execution = await heldRecord(snapshot, clock, JSON.stringify({ note: 'n', login }));
      expect(execution.secret_pointers).toEqual(['/login']);
      expect(execution.arguments_json).toBe('{"login":"[REDACTED]","note":"n"}');
      expect(execution.sealed_arguments).not.toBeNull();
      expect(JSON.stringify(execution)).not.toContain('Hunter-22');

      const page = executionPage(
        { approver: { id: 'f', name: null, groups: ['finance'] }, csrf: 'c', now: clock.now() },
        { execution, refusal: null, flash: null },
      );
      expect(page).toMatch(/<code>\/login<\/code><\/th><td><em class="secret"[^>]*>hidden \(secret\)<\/em>/);
      const customerPage = customerCallPage(
        { customer: null, now: clock.now() },
        { execution, csrf: 'c', error: null },
      );
      const notice = noticeOf({ consoleUrl: (id) => `http://127.0.0.1/console/executions/${id}` }, execution);
      for (const shown of [page, customerPage, notice.summary]) expect(shown).not.toContain('Hunter-22');
      expect(notice.summary).toBe('{"login":"[REDACTED]","note":"n"}');

      // The same string without a secret in it (the code is null) is shown as it is, and nothing is sealed.
      const plain = JSON.stringify({ user: 'u-1', code: null });
      const openExecution = await heldRecord(snapshot, clock, JSON.stringify({ note: 'n', login: plain }));
      expect(openExecution.secret_pointers).toEqual([]);
      expect(openExecution.sealed_arguments).toBeNull();
      expect(JSON.parse(openExecution.arguments_json ?? 'null')).toEqual({ note: 'n', login: plain });
    },
  );
});
