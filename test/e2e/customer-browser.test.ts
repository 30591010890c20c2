// The customer's confirmation in a real browser (Chromium driven by playwright-core) against
// `npm start`'s entry point as a process: the support agent asks for a refund for customer-1042,
// the customer opens approval_url, signs in and confirms (a large refund then waits for finance),
// or declines; another customer and the finance approver's own session cannot answer it; a call
// nobody answers in time expires. The demo ERP counts what reached it.
// One long file: its flows share one runtime process per approval time, one browser and one ERP.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { contentSecurityPolicy } from '../../functions/console.js';
import { launchChromium, openPage } from '../support/browser.js';
import {
  callOn,
  type DemoGateway,
  startDemoGateway,
  statusBecomes,
  statusOf,
  stopDemoGateway,
} from '../support/demo-gateways.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, temporaryFolder } from '../support/runtime-process.js';

const dana = { id: 'customer-1042', password: 'demo-customer-password' };
/** A second customer, added to the demo configuration for this test. */
const omar = { id: 'customer-2001', password: 'other-customer-password' };
const finance = { id: 'finance-approver', password: 'demo-finance-password' };
const refundTool = 'erp.refunds.create';
const waitingForCustomer =
  'Waiting for the customer: ask them to open approval_url and confirm. Then check with the status tool.';

/** The support agent's gateway (its client acts for customer-1042). */
type Gateway = DemoGateway;

let erp: DemoErp;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let browser: Browser;
/** The demo organization (24 h to decide), with a second customer. */
let main: Gateway;
/** The same with a few seconds to decide, for the expiry case. */
let hurried: Gateway;
const gateways: Gateway[] = [];

const startGateway = async (name: string, approvalTime: string): Promise<Gateway> => {
  const gateway = await startDemoGateway({
    folder: folder.path,
    name,
    erpUrl: erp.url,
    token: demoTokens.support,
    clientName: 'customer-browser-e2e',
    configure: (text) => {
      expect(text).toContain('approval_time: 24h');
      expect(text).toContain('customers:\n');
      return text
        .replace('approval_time: 24h', `approval_time: ${approvalTime}`)
        .replace(
          'customers:\n',
          `customers:\n  - id: ${omar.id}\n    name: Omar Other\n    password: ${omar.password}\n`,
        );
    },
  });
  gateways.push(gateway);
  return gateway;
};

beforeAll(async () => {
  erp = await startDemoErp();
  folder = await temporaryFolder('gateway-customer-browser-');
  const [first, second, chromium] = await Promise.allSettled([
    startGateway('main', '24h'),
    startGateway('hurried', '8s'),
    launchChromium(),
  ]);
  if (chromium.status === 'fulfilled') browser = chromium.value;
  for (const started of [first, second, chromium]) if (started.status === 'rejected') throw started.reason;
  if (first.status === 'fulfilled' && second.status === 'fulfilled') [main, hurried] = [first.value, second.value];
}, 180_000);

afterAll(async () => {
  await browser?.close();
  for (const gateway of gateways) await stopDemoGateway(gateway);
  await erp?.close();
  await folder?.remove();
});

/** The support agent's refund for customer-1042: held for the customer (and finance above 500). */
const heldRefund = async (gateway: Gateway, amount: string, reason: string) => {
  const result = await callOn(gateway, refundTool, {
    order_reference: 'SO-2024-0042',
    amount,
    currency: 'EUR',
    reason,
  });
  const executionId = result.execution_id ?? '';
  expect(executionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(result).toEqual({
    status: 'pending_approval',
    execution_id: executionId,
    result: null,
    code: null,
    message: waitingForCustomer,
    approval_url: `${gateway.runtime.baseUrl}/customer/calls/${executionId}`,
    input_errors: null,
  });
  expect(erp.callsFor(executionId)).toBe(0);
  return { executionId, approvalUrl: result.approval_url ?? '' };
};

/** Fills and sends the sign-in form the browser was sent to (customers' or approvers'). */
const signIn = async (page: Page, who: 'customer' | 'approver', person: { id: string; password: string }) => {
  const path = who === 'customer' ? '/customer/sign-in' : '/console/sign-in';
  expect(new URL(page.url()).pathname).toBe(path);
  await page.getByLabel(who === 'customer' ? 'Customer id' : 'Approver id').fill(person.id);
  await page.getByLabel('Password').fill(person.password);
  const answer = page.waitForResponse((response) => response.request().method() === 'POST');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const sent = await answer;
  await page.waitForLoadState();
  const refusal = sent.status() === 303 ? '' : `${sent.status()}: ${await page.getByRole('alert').textContent()}`;
  expect(refusal, `the sign-in of ${person.id} was refused`).toBe('');
  expect(new URL(page.url()).pathname).not.toBe(path);
};

/** The customer opens the link, is sent to sign in, and comes back to the request. */
const openAsCustomer = async (page: Page, approvalUrl: string, person = dana) => {
  await page.goto(approvalUrl);
  expect(new URL(page.url()).searchParams.get('next')).toBe(new URL(approvalUrl).pathname);
  await signIn(page, 'customer', person);
  expect(page.url()).toBe(approvalUrl);
};

const argumentRows = (page: Page) =>
  page
    .locator('table.arguments tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [
        row.querySelector('th')?.textContent?.trim() ?? '',
        row.querySelector('td')?.textContent?.trim() ?? '',
      ]),
    );

const fact = (page: Page, term: string) =>
  page.locator(`xpath=//dl[@class="facts"]/dt[.="${term}"]/following-sibling::dd[1]`);

const refundCalls = () => erp.calls().filter((received) => received.method === 'POST' && received.route === '/refunds');

describe("the customer's confirmation in Chromium against the local runtime", () => {
  it(verifies(
    ['customer.approval-url', 'customer.fresh-sign-in', 'customer.page-shows-exactly', 'customer.answer-post-only'],
    'the customer opens approval_url, signs in, reads exactly the refund and confirms; it runs once',
  ), async () => {
    const before = refundCalls().length;
    const { executionId, approvalUrl } = await heldRefund(main, '120.50', 'Arrived damaged');
    // The status tool answers the same while the customer's step is open.
    expect(await statusOf(main, executionId)).toMatchObject({
      status: 'pending_approval',
      message: waitingForCustomer,
      approval_url: approvalUrl,
    });

    const { context, page, problems } = await openPage(browser);
    try {
      await openAsCustomer(page, approvalUrl);
      const shown = await page.reload();
      expect(shown?.status()).toBe(200);
      expect(shown?.headers()['content-security-policy']).toBe(contentSecurityPolicy);
      expect(shown?.headers()['x-frame-options']).toBe('DENY');
      await expect(page.locator('h1').textContent()).resolves.toBe('Confirm a request made for you');
      await expect(fact(page, 'Request').textContent()).resolves.toBe('Refunds: create (erp.refunds.create)');
      await expect(fact(page, 'Amount').textContent()).resolves.toBe('120.5 EUR');
      await expect(fact(page, 'Time left').textContent()).resolves.toMatch(/^23 h 5\d min$/);
      await expect(fact(page, 'If you confirm').textContent()).resolves.toBe(
        'It runs at once, once, exactly as shown.',
      );
      expect(await argumentRows(page)).toEqual([
        ['/amount', '120.5'],
        ['/currency', 'EUR'],
        ['/order_reference', 'SO-2024-0042'],
        ['/reason', 'Arrived damaged'],
      ]);
      // No link into the staff console.
      await expect(page.locator('a[href^="/console"]').count()).resolves.toBe(0);

      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForURL((next) => next.pathname === '/customer/answered');
      await expect(page.getByRole('status').textContent()).resolves.toContain('Confirmed. The call runs now');
      expect(problems.list).toEqual([]);

      // The answer ended the session: opening the link again asks to sign in again.
      await page.goto(approvalUrl);
      expect(new URL(page.url()).pathname).toBe('/customer/sign-in');
    } finally {
      await context.close();
    }

    const done = await statusBecomes(main, executionId, 'succeeded');
    expect(done).toMatchObject({ status: 'succeeded', code: null, approval_url: null });
    expect(done.result).toMatchObject({
      refund_id: expect.stringMatching(/^RF-/),
      amount: '120.5',
      status: 'recorded',
    });
    expect(erp.callsFor(executionId)).toBe(1);
    expect(refundCalls().length).toBe(before + 1);
    expect(refundCalls().at(-1)?.body).toEqual({
      order_reference: 'SO-2024-0042',
      amount: '120.5',
      currency: 'EUR',
      reason: 'Arrived damaged',
    });
  }, 180_000);

  it(verifies(
    ['customer.then-staff', 'approvals.customer-step-kept'],
    'a large refund: the customer confirms first, then finance approves in the console; it runs once',
  ), async () => {
    const { executionId, approvalUrl } = await heldRefund(main, '750', 'Wrong size, whole order');
    const staffView = await openPage(browser);
    const customerView = await openPage(browser);
    try {
      const consolePage = `${main.runtime.baseUrl}/console/executions/${executionId}`;
      await staffView.page.goto(consolePage);
      await signIn(staffView.page, 'approver', finance);
      // Until the customer has confirmed, finance may only reject.
      await expect(staffView.page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(0);
      await expect(staffView.page.getByRole('button', { name: 'Reject' }).count()).resolves.toBe(1);

      await openAsCustomer(customerView.page, approvalUrl);
      await expect(fact(customerView.page, 'If you confirm').textContent()).resolves.toBe(
        'The organization then approves or rejects it; it runs only if they approve.',
      );
      await customerView.page.getByRole('button', { name: 'Confirm' }).click();
      await customerView.page.waitForURL((next) => next.pathname === '/customer/answered');
      await expect(customerView.page.getByRole('status').textContent()).resolves.toContain(
        "It now waits for the organization's approval",
      );
      const waiting = await statusOf(main, executionId);
      expect(waiting).toMatchObject({ status: 'pending_approval', approval_url: null });
      expect(erp.callsFor(executionId)).toBe(0);

      await staffView.page.reload();
      await expect(staffView.page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(1);
      await staffView.page.getByRole('button', { name: 'Approve and run' }).click();
      await staffView.page.waitForURL((next) => next.searchParams.get('done') === 'approved');
      expect([...staffView.problems.list, ...customerView.problems.list]).toEqual([]);
    } finally {
      await staffView.context.close();
      await customerView.context.close();
    }
    const done = await statusBecomes(main, executionId, 'succeeded');
    expect(done).toMatchObject({ status: 'succeeded', code: null });
    expect(erp.callsFor(executionId)).toBe(1);
    expect(refundCalls().at(-1)?.body).toEqual({
      order_reference: 'SO-2024-0042',
      amount: '750',
      currency: 'EUR',
      reason: 'Wrong size, whole order',
    });
  }, 180_000);

  it(verifies(
    ['customer.then-staff', 'customer.answer-post-only'],
    'the customer declines: rejected with customer_declined, nothing ran',
  ), async () => {
    const { executionId, approvalUrl } = await heldRefund(main, '80', 'Changed my mind');
    const { context, page, problems } = await openPage(browser);
    try {
      await openAsCustomer(page, approvalUrl);
      await page.getByRole('button', { name: 'Decline' }).click();
      await page.waitForURL((next) => next.pathname === '/customer/answered');
      await expect(page.getByRole('status').textContent()).resolves.toContain('Declined. Nothing ran');
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
    const rejected = await statusBecomes(main, executionId, 'rejected');
    expect(rejected).toMatchObject({ status: 'rejected', code: 'customer_declined', result: null });
    expect(erp.callsFor(executionId)).toBe(0);
  }, 180_000);

  it(verifies(
    ['customer.other-customer-refused', 'customer.fresh-sign-in'],
    "another customer and the finance approver's own session cannot confirm it",
  ), async () => {
    const { executionId, approvalUrl } = await heldRefund(main, '60', 'Late delivery');
    const other = await openPage(browser);
    const staff = await openPage(browser);
    try {
      await openAsCustomer(other.page, approvalUrl, omar);
      const refused = await other.page.reload();
      expect(refused?.status()).toBe(404);
      const text = (await other.page.locator('body').textContent()) ?? '';
      expect(text).toContain('There is no such request for you.');
      expect(text).not.toContain('SO-2024-0042');
      await expect(other.page.getByRole('button', { name: 'Confirm' }).count()).resolves.toBe(0);

      // The finance approver, signed in to the console, is still sent to the customer's sign-in.
      await staff.page.goto(`${main.runtime.baseUrl}/console`);
      await signIn(staff.page, 'approver', finance);
      await staff.page.goto(approvalUrl);
      expect(new URL(staff.page.url()).pathname).toBe('/customer/sign-in');
      // And a posted answer with the staff session answers nothing.
      const posted = await staff.context.request.post(`${approvalUrl}/answer`, {
        form: { outcome: 'confirm', csrf: 'x', arguments_hash: 'x' },
        headers: { origin: main.runtime.baseUrl },
        maxRedirects: 0,
      });
      expect(posted.status()).toBe(401);
      expect([...other.problems.list, ...staff.problems.list]).toEqual([]);
    } finally {
      await other.context.close();
      await staff.context.close();
    }
    expect(await statusOf(main, executionId)).toMatchObject({ status: 'pending_approval', approval_url: approvalUrl });
    expect(erp.callsFor(executionId)).toBe(0);
  }, 180_000);

  it(verifies(
    ['customer.fresh-sign-in', 'customer.answer-post-only'],
    'a refund nobody answers in time expires; the page left open cannot confirm it, and the ERP is never called',
  ), async () => {
    const { executionId, approvalUrl } = await heldRefund(hurried, '40', 'Too slow');
    const { context, page, problems } = await openPage(browser);
    try {
      await openAsCustomer(page, approvalUrl);
      await expect(page.getByRole('button', { name: 'Confirm' }).count()).resolves.toBe(1);
      const expired = await statusBecomes(hurried, executionId, 'expired');
      expect(expired).toMatchObject({ status: 'expired', code: 'approval_expired', result: null });

      const refused = page.waitForResponse((response) => response.request().method() === 'POST');
      await page.getByRole('button', { name: 'Confirm' }).click();
      expect((await refused).status()).toBe(409);
      await page.waitForLoadState();
      await expect(page.getByRole('alert').textContent()).resolves.toBe(
        'The time to confirm this request ran out; nothing ran.',
      );
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
    expect(await statusOf(hurried, executionId)).toMatchObject({ status: 'expired', code: 'approval_expired' });
    expect(erp.callsFor(executionId)).toBe(0);
  }, 180_000);
});
