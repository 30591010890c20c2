// The approver console in a real browser (Chromium driven by playwright-core) against `npm start`'s
// entry point as a process: an agent's large purchase order is held, an approver signs in, reads
// the exact arguments and approves (the call then runs once against the demo ERP) or rejects; a
// call nobody decides in time expires without reaching the ERP; an approver of another group
// neither sees nor opens the call.
// One long file: its four flows share one runtime process, one browser and one demo ERP, started once.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoErp, demoErpApiKey, startDemoErp } from '../../examples/erp/server.js';
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

const finance = { id: 'finance-approver', password: 'demo-finance-password' };
const operations = { id: 'operations-approver', password: 'demo-operations-password' };
const createTool = 'erp.purchase_orders.create';

type Gateway = DemoGateway;

let erp: DemoErp;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let browser: Browser;
/** The demo organization as shipped (24 h to decide). */
let main: Gateway;
/** The same organization with three seconds to decide, for the expiry case. */
let hurried: Gateway;
const gateways: Gateway[] = [];

const startGateway = async (name: string, approvalTime: string): Promise<Gateway> => {
  const gateway = await startDemoGateway({
    folder: folder.path,
    name,
    erpUrl: erp.url,
    token: demoTokens.procurement,
    clientName: 'console-browser-e2e',
    configure: (text) => {
      expect(text).toContain('approval_time: 24h');
      return text.replace('approval_time: 24h', `approval_time: ${approvalTime}`);
    },
  });
  gateways.push(gateway);
  return gateway;
};

beforeAll(async () => {
  erp = await startDemoErp();
  folder = await temporaryFolder('gateway-console-browser-');
  // Both runtimes and the browser start together (the file's run time is mostly theirs); all are
  // awaited before a failure is reported, so afterAll stops whatever did start.
  const [first, second, chromium] = await Promise.allSettled([
    startGateway('main', '24h'),
    startGateway('hurried', '3s'),
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

/** The agent's purchase order of 1500: the policy holds it for the finance group. */
const heldOrder = async (gateway: Gateway, description: string) => {
  const result = await callOn(gateway, createTool, {
    vendor_id: 'V-100',
    amount: '1500',
    currency: 'EUR',
    description,
  });
  expect(result).toMatchObject({ status: 'pending_approval', code: null, result: null });
  const executionId = result.execution_id ?? '';
  expect(executionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(erp.callsFor(executionId)).toBe(0);
  return { executionId, result };
};

const createCalls = () =>
  erp.calls().filter((received) => received.method === 'POST' && received.route === '/purchase-orders');

const callPage = (gateway: Gateway, executionId: string) =>
  `${gateway.runtime.baseUrl}/console/executions/${executionId}`;

/** Fills and sends the sign-in form the browser was sent to. */
const signIn = async (page: Page, approver: { id: string; password: string }) => {
  expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  await page.getByLabel('Approver id').fill(approver.id);
  await page.getByLabel('Password').fill(approver.password);
  const answer = page.waitForResponse((response) => response.request().method() === 'POST');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const sent = await answer;
  await page.waitForLoadState();
  // A refused sign-in stays on the form with the reason in an alert: say so rather than time out.
  const refusal = sent.status() === 303 ? '' : `${sent.status()}: ${await page.getByRole('alert').textContent()}`;
  expect(refusal, `the sign-in of ${approver.id} was refused`).toBe('');
  expect(new URL(page.url()).pathname).not.toBe('/console/sign-in');
};

/** The call page's arguments table, one [JSON Pointer, shown value] pair per row. */
const argumentRows = (page: Page) =>
  page
    .locator('table.arguments tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [
        row.querySelector('th')?.textContent?.trim() ?? '',
        row.querySelector('td')?.textContent?.trim() ?? '',
      ]),
    );

/** The given words of an argument's shown value, in the order the browser drew them: line by line, left to right. */
const drawnOrder = (page: Page, pointer: string, words: readonly string[]) =>
  page.locator('table.arguments tbody tr').evaluateAll(
    (rows, [wanted, pointerText]) => {
      const cell = rows
        .find((row) => row.querySelector('th')?.textContent?.trim() === pointerText)
        ?.querySelector('td');
      const drawn: [string, number, number][] = [];
      const walker = document.createTreeWalker(cell ?? document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (const word of wanted) {
          const at = text.indexOf(word);
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + word.length);
          const box = range.getBoundingClientRect();
          drawn.push([word, Math.round(box.top), box.left]);
        }
      }
      return drawn.sort((a, b) => a[1] - b[1] || a[2] - b[2]).map(([word]) => word);
    },
    [words, pointer] as const,
  );

const fact = (page: Page, term: string) =>
  page.locator(`xpath=//dl[@class="facts"]/dt[.="${term}"]/following-sibling::dd[1]`);

describe('the approver console in Chromium against the local runtime', () => {
  it(verifies(
    ['console.browser-flow', 'console.call-page', 'console.csp'],
    'an approver signs in, sees the exact arguments and approves; the call runs once',
  ), async () => {
    const before = createCalls().length;
    const { executionId, result } = await heldOrder(main, 'Office chairs');
    // Nothing reaches the ERP while the call waits.
    expect(createCalls().length).toBe(before);
    const url = callPage(main, executionId);
    // approval_url is the customer's link; a call only staff decide has none (staff use the console).
    expect(result.approval_url).toBeNull();

    const { context, page, problems } = await openPage(browser);
    try {
      // Without a session the link leads to sign-in, and back to the call afterwards.
      await page.goto(url);
      expect(new URL(page.url()).searchParams.get('next')).toBe(`/console/executions/${executionId}`);
      await signIn(page, finance);
      expect(page.url()).toBe(url);

      const shown = await page.reload();
      expect(shown?.status()).toBe(200);
      expect(shown?.headers()['content-security-policy']).toBe(contentSecurityPolicy);
      expect(shown?.headers()['content-security-policy']).not.toMatch(/script-src/);
      // Exactly the canonical arguments, nothing more.
      expect(await argumentRows(page)).toEqual([
        ['/amount', '1500'],
        ['/currency', 'EUR'],
        ['/description', 'Office chairs'],
        ['/vendor_id', 'V-100'],
      ]);
      await expect(fact(page, 'Agent').textContent()).resolves.toBe('procurement-agent');
      await expect(fact(page, 'Policy that asked').textContent()).resolves.toContain('large-purchase-orders');
      await expect(fact(page, 'Waits for').textContent()).resolves.toBe('group finance');
      await expect(fact(page, 'Time left').textContent()).resolves.toMatch(/^23 h 5\d min/);
      // The console's own stylesheet is allowed by the policy: it loaded and applies.
      const rules = await page.evaluate(() => [...document.styleSheets].map((sheet) => sheet.cssRules.length));
      expect(rules).toHaveLength(1);
      expect(rules[0]).toBeGreaterThan(0);

      await page.getByRole('button', { name: 'Approve and run' }).click();
      await page.waitForURL((next) => next.searchParams.get('done') === 'approved');
      expect(new URL(page.url()).pathname).toBe(`/console/executions/${executionId}`);
      await expect(page.getByRole('status').textContent()).resolves.toContain('Approved. The call runs now');
      await expect(page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(0);
      expect(problems.list).toEqual([]);
      // The check above would have seen a violation: an image the policy forbids is reported.
      const violation = page.waitForEvent('console', (message) => message.text().includes('Content Security Policy'));
      await page.evaluate(() => {
        const image = document.createElement('img');
        image.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
        document.body.append(image);
      });
      await violation;
      expect(problems.list.join('\n')).toContain('Content Security Policy');
    } finally {
      await context.close();
    }

    const done = await statusBecomes(main, executionId, 'succeeded');
    expect(done).toMatchObject({ status: 'succeeded', execution_id: executionId, code: null });
    // Sent once, with the arguments the approver saw.
    expect(erp.callsFor(executionId)).toBe(1);
    expect(createCalls().length).toBe(before + 1);
    expect(createCalls().at(-1)?.body).toEqual({
      vendor_id: 'V-100',
      amount: '1500',
      currency: 'EUR',
      description: 'Office chairs',
    });
    // The agent's result is the ERP's own record of the order.
    expect(done.result).toMatchObject({ id: expect.stringMatching(/^PO-\d+$/), amount: '1500', status: 'placed' });
    const record = await fetch(`${erp.url}/purchase-orders/${(done.result as { id: string }).id}`, {
      headers: { 'x-api-key': demoErpApiKey },
    });
    expect(done.result).toEqual(await record.json());
  }, 180_000);

  it(verifies(
    ['console.browser-flow', 'console.bidi-isolated', 'console.no-look-marked'],
    'an approver rejects with a reason; the agent reads it and nothing runs',
  ), async () => {
    const before = createCalls().length;
    // Tag characters and a blank braille cell hide text after what reads "Gold-plated staplers"; a
    // Hebrew letter would pull the digit groups after it into its direction; a private-use
    // character has no agreed look.
    const { executionId } = await heldOrder(
      main,
      'Gold-plated staplers\u{e0049}\u{e0067}\u2800 acct א 111 999\u{f0000}',
    );
    const reason = 'Over the quarterly budget; split it across two quarters.';

    const { context, page, problems } = await openPage(browser);
    try {
      await page.goto(`${main.runtime.baseUrl}/console`);
      await signIn(page, finance);
      // The inbox lists the call; its Review link opens it.
      await page.locator(`a[href="/console/executions/${executionId}"]`).click();
      await page.waitForURL(callPage(main, executionId));
      expect(await argumentRows(page)).toContainEqual([
        '/description',
        'Gold-plated staplersU+E0049U+E0067U+2800 acct א 111 999U+F0000',
      ]);
      const marks = page.locator('table.arguments .hidden-char');
      await expect(marks.count()).resolves.toBe(4);
      // Drawn in the order it is sent: the digit groups stay after the Hebrew letter, left to right.
      await expect(drawnOrder(page, '/description', ['acct', 'א', '111', '999'])).resolves.toEqual([
        'acct',
        'א',
        '111',
        '999',
      ]);
      for (const mark of await marks.all()) await expect(mark.isVisible()).resolves.toBe(true);

      await page.getByLabel('Reason').fill(reason);
      await page.getByRole('button', { name: 'Reject' }).click();
      await page.waitForURL((next) => next.searchParams.get('done') === 'rejected');
      await expect(page.getByRole('status').textContent()).resolves.toContain('Rejected. Nothing ran');
      await expect(fact(page, 'Reason given').textContent()).resolves.toBe(reason);
      await expect(page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(0);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }

    const rejected = await statusBecomes(main, executionId, 'rejected');
    expect(rejected).toMatchObject({ status: 'rejected', code: 'rejected', result: null });
    expect(rejected.message).toContain(reason);
    expect(erp.callsFor(executionId)).toBe(0);
    expect(createCalls().length).toBe(before);
  }, 180_000);

  it(verifies(
    'console.browser-flow',
    'a call nobody decides in time expires; the stale page cannot approve it, and the ERP is never called',
  ), async () => {
    const before = createCalls().length;
    const { executionId } = await heldOrder(hurried, 'Standing desks');

    const { context, page, problems } = await openPage(browser);
    try {
      await page.goto(callPage(hurried, executionId));
      await signIn(page, finance);
      // Opened while it still waits: the buttons are there...
      await expect(page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(1);

      const expired = await statusBecomes(hurried, executionId, 'expired');
      expect(expired).toMatchObject({ status: 'expired', code: 'approval_expired', result: null });

      // ...but approving from the page left open changes nothing once the time is up.
      const refused = page.waitForResponse((response) => response.request().method() === 'POST');
      await page.getByRole('button', { name: 'Approve and run' }).click();
      expect((await refused).status()).toBe(409);
      await page.waitForLoadState();
      await expect(page.getByRole('alert').textContent()).resolves.toContain('nothing');
      await expect(page.locator('p.status').textContent()).resolves.toBe('Expired (nobody decided in time)');

      const reopened = await page.goto(callPage(hurried, executionId));
      expect(reopened?.status()).toBe(200);
      await expect(page.locator('p.status').textContent()).resolves.toBe('Expired (nobody decided in time)');
      await expect(page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: 'Reject' }).count()).resolves.toBe(0);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }

    expect(await statusOf(hurried, executionId)).toMatchObject({ status: 'expired', code: 'approval_expired' });
    expect(erp.callsFor(executionId)).toBe(0);
    expect(createCalls().length).toBe(before);
  }, 180_000);

  it(verifies(
    'console.browser-flow',
    'an approver of another group neither sees the call in the inbox nor opens its page',
  ), async () => {
    const { executionId } = await heldOrder(main, 'Server racks');
    const link = `a[href="/console/executions/${executionId}"]`;

    const financeView = await openPage(browser);
    const operationsView = await openPage(browser);
    try {
      // The finance approver's inbox lists it (so its absence below means something)...
      await financeView.page.goto(`${main.runtime.baseUrl}/console`);
      await signIn(financeView.page, finance);
      await expect(financeView.page.locator(link).count()).resolves.toBe(1);

      // ...the operations approver's does not, and the call's page refuses them.
      await operationsView.page.goto(`${main.runtime.baseUrl}/console`);
      await signIn(operationsView.page, operations);
      expect(new URL(operationsView.page.url()).pathname).toBe('/console');
      await expect(operationsView.page.locator('h1').textContent()).resolves.toBe('Calls waiting for your decision');
      await expect(operationsView.page.locator(link).count()).resolves.toBe(0);

      const refused = await operationsView.page.goto(callPage(main, executionId));
      expect(refused?.status()).toBe(403);
      const text = (await operationsView.page.locator('body').textContent()) ?? '';
      expect(text).toContain('You are not an approver of the group this call waits for.');
      expect(text).not.toContain('Server racks');
      expect(text).not.toContain('1500');
      expect(text).not.toContain('V-100');
      await expect(operationsView.page.locator('table.arguments').count()).resolves.toBe(0);
      await expect(operationsView.page.getByRole('button', { name: 'Approve and run' }).count()).resolves.toBe(0);
      expect([...financeView.problems.list, ...operationsView.problems.list]).toEqual([]);
    } finally {
      await financeView.context.close();
      await operationsView.context.close();
    }

    expect(await statusOf(main, executionId)).toMatchObject({ status: 'pending_approval' });
    expect(erp.callsFor(executionId)).toBe(0);
  }, 180_000);
});
