// A call whose policy asks a fresh sign-in (@reauth), decided in a real browser (Chromium driven by
// playwright-core) against `npm start`'s entry point as a process: a session signed in longer ago
// than the policy allows is refused and told why, and after signing in again with the password,
// from the call's own page and back to it, the approver approves and the call runs once.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { launchChromium, openPage, shows } from '../support/browser.js';
import {
  callOn,
  type DemoGateway,
  startDemoGateway,
  statusBecomes,
  stopDemoGateway,
} from '../support/demo-gateways.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, temporaryFolder } from '../support/runtime-process.js';

const finance = { id: 'finance-approver', password: 'demo-finance-password' };
/**
 * How recent a sign-in the test's policy asks: short, so a session grows too old within the test,
 * and long enough that a loaded machine signs in again and clicks Approve well within it.
 */
const reauthMs = 8_000;
/** The test's only policy: every purchase order is held for finance, who decide it freshly signed in. */
const policy = `@id("fresh-sign-in-orders")
@approval("staff")
@approvers("finance")
@reauth("${reauthMs / 1000}s")
permit (principal in Group::"procurement", action == Action::"erp.purchase_orders.create", resource);
`;

let erp: DemoErp;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let browser: Browser | undefined;
let gateway: DemoGateway | undefined;

beforeAll(async () => {
  erp = await startDemoErp();
  folder = await temporaryFolder('gateway-console-step-up-');
  const [started, chromium] = await Promise.allSettled([
    startDemoGateway({
      folder: folder.path,
      name: 'step-up',
      erpUrl: erp.url,
      token: demoTokens.procurement,
      clientName: 'console-step-up-e2e',
      configure: (text) => {
        // The organization's copy is in place when its configuration is edited: the policy joins it.
        writeFileSync(join(folder.path, 'step-up', 'policies', 'step-up.cedar'), policy);
        expect(text).toContain('  - policies/demo.cedar');
        return text.replace('  - policies/demo.cedar', '  - policies/step-up.cedar');
      },
    }),
    launchChromium(),
  ]);
  if (chromium.status === 'fulfilled') browser = chromium.value;
  if (started.status === 'fulfilled') gateway = started.value;
  for (const result of [started, chromium]) if (result.status === 'rejected') throw result.reason;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (gateway !== undefined) await stopDemoGateway(gateway);
  await erp?.close();
  await folder?.remove();
});

/** Fills and sends the password form the browser is on; answers when the password was checked (at the latest). */
const signIn = async (page: Page): Promise<number> => {
  expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  await page.getByLabel('Approver id').fill(finance.id);
  await page.getByLabel('Password').fill(finance.password);
  const answer = page.waitForResponse((response) => response.request().method() === 'POST');
  await page.getByRole('button', { name: 'Sign in' }).click();
  expect((await answer).status()).toBe(303);
  const checked = Date.now();
  await page.waitForLoadState();
  return checked;
};

describe('a call that asks a fresh sign-in, in Chromium against the local runtime', () => {
  it(verifies(
    ['approvals.step-up-end-to-end', 'approvals.step-up-sign-in-time', 'approvals.step-up-sign-in-again'],
    'a session older than @reauth allows is refused; signing in again with the password leads back to the call, which is then approved and runs once',
  ), async () => {
    if (gateway === undefined || browser === undefined) throw new Error('the gateway or the browser did not start');
    const result = await callOn(gateway, 'erp.purchase_orders.create', {
      vendor_id: 'V-100',
      amount: '1500',
      currency: 'EUR',
      description: 'Server racks',
    });
    expect(result).toMatchObject({ status: 'pending_approval' });
    const executionId = result.execution_id ?? '';
    const callUrl = `${gateway.runtime.baseUrl}/console/executions/${executionId}`;

    const { context, page, problems } = await openPage(browser);
    try {
      await page.goto(callUrl);
      const signedInAt = await signIn(page);
      expect(page.url()).toBe(callUrl);
      // The session grows older than the policy allows: the one wait of this test, bounded by @reauth.
      await page.waitForTimeout(Math.max(0, signedInAt + reauthMs + 250 - Date.now()));
      await page.reload();
      const notice = page.locator('.notice.sign-in-again');
      await shows(page, notice, 'why this sign-in cannot decide the call');
      await expect(notice.textContent()).resolves.toMatch(
        new RegExp(
          `This call asks for a sign-in within the last ${reauthMs / 1000} seconds, and you signed in \\d+ s ago\\.`,
        ),
      );
      await expect(page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(0);

      // Signing in again: the password form, then back on the call's page, where the approver decides.
      await page.getByRole('link', { name: 'Sign in again' }).click();
      await page.waitForURL((url) => url.pathname === '/console/sign-in');
      expect(new URL(page.url()).searchParams.get('next')).toBe(`/console/executions/${executionId}`);
      await signIn(page);
      expect(page.url()).toBe(callUrl);
      expect(erp.callsFor(executionId)).toBe(0);
      await page.getByRole('button', { name: 'Approve and run' }).click();
      await page.waitForURL((url) => url.searchParams.get('done') === 'approved');
      await expect(statusBecomes(gateway, executionId, 'succeeded')).resolves.toMatchObject({ status: 'succeeded' });
      expect(erp.callsFor(executionId)).toBe(1);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
