// Staff approvals end to end, against `npm start`'s entry point as a real process: the agent's held
// call, the webhook notice, the console's refusals, decisions racing each other, and the ERP's own
// call counter proving each approved call ran exactly once and every other ran not at all.
//
// Long: each decision path is a whole journey through a real process, with the ERP counter checked
// at the end.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import type { Execution } from '../../shared/executions/execution.js';
import { ResultObject } from '../../shared/result.js';
import {
  type ApprovalOrg,
  approvalOrg,
  approvers,
  eventually,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/approval-org.js';
import { ConsoleSession, signedIn } from '../support/console.js';
import { humanStep } from '../support/executions.js';
import { quietLog } from '../support/logs.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

let erp: DemoErp;
let org: ApprovalOrg;
let webhooks: WebhookReceiver;

beforeAll(async () => {
  erp = await startDemoErp();
  org = await approvalOrg();
  webhooks = await startWebhookReceiver();
});
afterAll(async () => {
  await webhooks?.close();
  await erp?.close();
  await org?.remove();
});

const startGateway = (configFile: string, dataDir: string, env: Record<string, string> = {}) =>
  startRuntimeProcess(['--data-dir', dataDir, '--no-demo-erp', '--config', configFile], {
    DEMO_ERP_URL: erp.url,
    POWERTOOLS_LOG_LEVEL: 'INFO',
    ...env,
  });

const connect = (runtime: RuntimeProcess) => connectAgent(runtime.mcpUrl, demoTokens.procurement);

const storeOf = (runtime: RuntimeProcess) =>
  new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );

const bigOrder = { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description: 'Office chairs' };

const callTool = async (client: Client, name: string, args: Record<string, unknown>) => {
  const answer = await client.callTool({ name, arguments: args });
  return { answer, result: ResultObject.parse(answer.structuredContent) };
};

const hold = async (client: Client, args: Record<string, unknown> = bigOrder, name = 'erp.purchase_orders.create') => {
  const { result } = await callTool(client, name, args);
  expect(result.status).toBe('pending_approval');
  return result.execution_id ?? '';
};

const statusOf = async (client: Client, executionId: string) => {
  const answer = await client.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } });
  return { answer, result: ResultObject.parse(answer.structuredContent) };
};

/** Waits until the call has left pending_approval and approved (bounded). */
const settled = async (client: Client, executionId: string) =>
  eventually(
    () => statusOf(client, executionId),
    ({ result }) => result.status !== 'pending_approval' && result.status !== 'approved',
  );

describe('staff approvals against the demo ERP', () => {
  let runtime: RuntimeProcess;
  let client: Client;
  let store: DynamoDbExecutionStore;
  let finance: ConsoleSession;
  let configFile: string;

  beforeAll(async () => {
    configFile = await org.configWith({ webhookUrl: webhooks.url });
    runtime = await startGateway(configFile, join(org.folder, 'data-main'));
    client = await connect(runtime);
    store = storeOf(runtime);
    finance = await signedIn(runtime.baseUrl, approvers.finance.id, approvers.finance.password);
  });
  afterAll(async () => {
    await client?.close();
    await runtime?.stop();
  });
  beforeEach(() => erp.reset());

  it(
    verifies(
      ['approvals.pending-at-once', 'approvals.status-lifecycle', 'notify.channels'],
      'holds a 1500 order at once, notifies, and runs it once when finance approves',
    ),
    async () => {
      const { answer, result } = await callTool(client, 'erp.purchase_orders.create', bigOrder);
      expect(result).toMatchObject({ status: 'pending_approval', code: null, result: null, approval_url: null });
      expect(result.message).toMatch(/Waiting for approval/);
      expect(answer.isError).toBe(false);
      const executionId = result.execution_id ?? '';
      const held = (await store.get(executionId)) as Execution;
      expect(Date.parse(held.expires_at ?? '') - Date.parse(held.created_at)).toBe(24 * 3_600_000);
      expect(held.decision?.step).toEqual(humanStep({ staff: 'finance', customer: false }));
      expect(erp.callsFor(executionId)).toBe(0);

      // The approvers hear about it: the console link, the tool, the agent and a summary.
      const notice = await webhooks.waitFor((body) => body.execution_id === executionId);
      expect(notice).toMatchObject({
        type: 'approval.requested',
        tool: 'erp.purchase_orders.create',
        agent_id: 'procurement-agent',
        staff_group: 'finance',
        console_url: `${runtime.baseUrl}/console/executions/${executionId}`,
      });
      expect(notice.summary).toContain('"amount":"1500"');
      expect(notice.text).toContain(`${runtime.baseUrl}/console/executions/${executionId}`);
      expect(runtime.output()).toContain('call waiting for approval');
      expect((await statusOf(client, executionId)).result.status).toBe('pending_approval');

      const form = await finance.decisionForm(executionId);
      const decided = await finance.decide(executionId, form, 'approve');
      expect(decided.status).toBe(303);
      expect(decided.headers.get('location')).toBe(`/console/executions/${executionId}?done=approved`);
      const { answer: final, result: outcome } = await settled(client, executionId);
      expect(outcome).toMatchObject({
        status: 'succeeded',
        code: null,
        result: { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description: 'Office chairs', status: 'placed' },
      });
      expect(final.isError).toBe(false);
      expect(erp.callsFor(executionId)).toBe(1);
      expect(erp.calls()[0]?.body).toEqual({
        vendor_id: 'V-100',
        amount: '1500',
        currency: 'EUR',
        description: 'Office chairs',
      });
      const record = (await store.get(executionId)) as Execution;
      expect(record.history.map((change) => change.status)).toEqual(['pending_approval', 'approved', 'succeeded']);
      expect(record).toMatchObject({ decided_by: approvers.finance.id, task_token: expect.any(String) });
      expect(
        webhooks.received.filter((body) => (body as { execution_id?: string }).execution_id === executionId),
      ).toHaveLength(1);
    },
  );

  it(
    verifies(
      'approvals.one-outcome',
      'twenty concurrent approve POSTs run the call once; the others are told it was decided',
    ),
    async () => {
      const executionId = await hold(client);
      const form = await finance.decisionForm(executionId);
      const answers = await Promise.all(Array.from({ length: 20 }, () => finance.decide(executionId, form, 'approve')));
      expect(answers.filter((answer) => answer.status === 303)).toHaveLength(1);
      const losers = answers.filter((answer) => answer.status !== 303);
      expect(losers.map((answer) => answer.status)).toEqual(Array(19).fill(409));
      for (const loser of losers) expect(loser.body).toContain('decided already');
      expect((await settled(client, executionId)).result.status).toBe('succeeded');
      expect(erp.callsFor(executionId)).toBe(1);
    },
  );

  it(verifies('approvals.one-outcome', 'two approvers deciding at once end in one outcome'), async () => {
    const other = await signedIn(runtime.baseUrl, approvers.finance2.id, approvers.finance2.password);
    for (let trial = 0; trial < 5; trial += 1) {
      const executionId = await hold(client);
      const [mine, theirs] = await Promise.all([finance.decisionForm(executionId), other.decisionForm(executionId)]);
      const [approve, reject] = await Promise.all([
        finance.decide(executionId, mine, 'approve'),
        other.decide(executionId, theirs, 'reject', 'Not this quarter'),
      ]);
      expect([approve.status, reject.status].sort()).toEqual([303, 409]);
      const { result } = await settled(client, executionId);
      if (approve.status === 303) {
        expect(result.status).toBe('succeeded');
        expect(erp.callsFor(executionId)).toBe(1);
      } else {
        expect(result).toMatchObject({ status: 'rejected', code: 'rejected' });
        expect(erp.callsFor(executionId)).toBe(0);
      }
    }
  });

  it(
    verifies(
      ['console.tampered-hash', 'console.csrf', 'console.get-never-decides', 'console.approver-group'],
      'refuses bad decisions and changes nothing',
    ),
    async () => {
      const executionId = await hold(client);
      // Once the approval run registered and approvers were notified, nothing may change the record.
      const before = (await eventually(
        () => store.get(executionId),
        (execution) => execution?.notified_at !== null,
      )) as Execution;
      expect(before.notified_at).not.toBeNull();
      const form = await finance.decisionForm(executionId);
      const path = `/console/executions/${executionId}/decision`;

      const tampered = await finance.decide(executionId, { ...form, argumentsHash: 'f'.repeat(64) }, 'approve');
      expect(tampered.status).toBe(409);
      expect(tampered.body).toContain('not the ones held');

      const noToken = await finance.post(path, { arguments_hash: form.argumentsHash, outcome: 'approve' });
      expect(noToken.status).toBe(403);
      const wrongToken = await finance.decide(executionId, { ...form, csrf: 'x'.repeat(43) }, 'approve');
      expect(wrongToken.status).toBe(403);
      const foreign = await finance.post(
        path,
        { csrf: form.csrf, arguments_hash: form.argumentsHash, outcome: 'approve' },
        { origin: 'https://attacker.example' },
      );
      expect(foreign.status).toBe(403);
      const crossSite = await finance.post(
        path,
        { csrf: form.csrf, arguments_hash: form.argumentsHash, outcome: 'approve' },
        { 'sec-fetch-site': 'cross-site' },
      );
      expect(crossSite.status).toBe(403);
      const opaque = await finance.post(
        path,
        { csrf: form.csrf, arguments_hash: form.argumentsHash, outcome: 'approve' },
        { origin: 'null' },
      );
      expect(opaque.status).toBe(403);

      // Opening the decision link (a mail scanner, a chat preview) never decides.
      const opened = await finance.get(
        `${path}?outcome=approve&csrf=${form.csrf}&arguments_hash=${form.argumentsHash}`,
      );
      expect(opened.status).toBe(405);
      expect(opened.headers.get('allow')).toBe('POST');
      const anonymous = await new ConsoleSession(runtime.baseUrl).post(path, {
        csrf: form.csrf,
        arguments_hash: form.argumentsHash,
        outcome: 'approve',
      });
      expect(anonymous.status).toBe(401);

      // Another group neither sees nor decides it.
      const operations = await signedIn(runtime.baseUrl, approvers.operations.id, approvers.operations.password);
      const theirPage = await operations.get(`/console/executions/${executionId}`);
      expect(theirPage.status).toBe(403);
      expect(theirPage.body).not.toContain('Office chairs');
      expect((await operations.get('/console')).body).not.toContain(executionId);
      const theirDecision = await operations.post(path, {
        csrf: operations.cookie('gateway_session') === undefined ? '' : ((await csrfOf(operations)) ?? ''),
        arguments_hash: form.argumentsHash,
        outcome: 'approve',
      });
      expect(theirDecision.status).toBe(403);

      // The requester never approves their own call, even in the right group.
      const requester = await signedIn(runtime.baseUrl, approvers.requester.id, approvers.requester.password);
      const ownPage = await requester.get(`/console/executions/${executionId}`);
      expect(ownPage.status).toBe(200);
      expect(ownPage.body).toContain('cannot decide a call you made yourself');
      expect(ownPage.body).not.toContain('name="outcome"');
      const ownDecision = await requester.post(path, {
        csrf: (await csrfOf(requester)) ?? '',
        arguments_hash: form.argumentsHash,
        outcome: 'approve',
      });
      expect(ownDecision.status).toBe(403);
      expect(ownDecision.body).toContain('cannot decide a call you made yourself');

      const after = (await store.get(executionId)) as Execution;
      expect(after).toEqual(before);
      expect(erp.callsFor(executionId)).toBe(0);
      // Still decidable by the right approver with the right form.
      expect((await finance.decide(executionId, form, 'reject')).status).toBe(303);
    },
  );

  it(
    verifies(
      ['approvals.rejection-note', 'approvals.status-lifecycle'],
      'a rejection tells the agent the reason and runs nothing',
    ),
    async () => {
      const executionId = await hold(client);
      const form = await finance.decisionForm(executionId);
      const tooLong = await finance.decide(executionId, form, 'reject', 'x'.repeat(501));
      expect(tooLong.status).toBe(400);
      expect(((await store.get(executionId)) as Execution).status).toBe('pending_approval');

      const rejected = await finance.decide(executionId, form, 'reject', '  Budget frozen\n until Q3\u202e ');
      expect(rejected.status).toBe(303);
      const { answer, result } = await statusOf(client, executionId);
      expect(result).toMatchObject({ status: 'rejected', code: 'rejected', result: null });
      expect(result.message).toBe('An approver rejected the call; nothing ran. Their reason: Budget frozen until Q3');
      expect(answer.isError).toBe(true);
      expect(erp.callsFor(executionId)).toBe(0);
      const page = await finance.get(`/console/executions/${executionId}?done=rejected`);
      expect(page.body).toContain('Rejected. Nothing ran');
      expect(page.body).toContain('Budget frozen until Q3');
      expect(page.body).not.toContain('name="outcome"');
    },
  );

  it(
    verifies(
      ['approvals.runs-exact-arguments', 'notify.no-secrets'],
      'runs a held call with a secret exactly as approved, showing and announcing no secret',
    ),
    async () => {
      const password = 'Initial-Portal-Pa55word-91';
      const executionId = await hold(
        client,
        { vendor_id: 'V-100', contact_email: 'ana@vendor.example', initial_password: password },
        'erp.vendors.grant_portal_access',
      );
      const notice = await webhooks.waitFor((body) => body.execution_id === executionId);
      expect(JSON.stringify(notice)).not.toContain(password);
      const form = await finance.decisionForm(executionId);
      expect(form.page.body).not.toContain(password);
      expect(form.page.body).toContain('hidden (secret)');
      expect(form.page.body).toContain('ana@vendor.example');
      expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
      const { result } = await settled(client, executionId);
      expect(result.status).toBe('succeeded');
      expect(erp.callsFor(executionId)).toBe(1);
      // The ERP got the secret as the agent sent it; the answer's session token stays redacted.
      expect(erp.calls()[0]?.body).toEqual({ contact_email: 'ana@vendor.example', initial_password: password });
      expect(JSON.stringify(result)).not.toContain(password);
      expect(runtime.output()).not.toContain(password);
    },
  );

  it(
    verifies(
      'approvals.runs-exact-arguments',
      'an approved call whose tool was turned off meanwhile fails and sends nothing',
    ),
    async () => {
      const executionId = await hold(client);
      const form = await finance.decisionForm(executionId);
      const original = await readFile(configFile, 'utf8');
      try {
        await writeFile(
          configFile,
          original.replace(
            '    amount_fields: [amount]',
            '    amount_fields: [amount]\n    disabled_tools: [erp.purchase_orders.create]',
          ),
        );
        await eventually(
          async () => (await client.listTools()).tools.map((tool) => tool.name),
          (names) => !names.includes('erp.purchase_orders.create'),
        );
        expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
        const { result } = await settled(client, executionId);
        expect(result).toMatchObject({ status: 'failed', code: 'tool_unavailable' });
        expect(erp.callsFor(executionId)).toBe(0);
      } finally {
        await writeFile(configFile, original);
        await eventually(
          async () => (await client.listTools()).tools.map((tool) => tool.name),
          (names) => names.includes('erp.purchase_orders.create'),
        );
      }
    },
  );

  /** Rewrites the running gateway's policy file, waits until it is reloaded, runs `body`, then restores it. */
  const withPolicy = async (edit: (text: string) => string, body: () => Promise<void>) => {
    const file = join(dirname(configFile), 'policies', 'demo.cedar');
    const original = await readFile(file, 'utf8');
    const reloads = () => runtime.output().split('configuration reloaded').length;
    const before = reloads();
    const changed = edit(original);
    expect(changed).not.toBe(original);
    try {
      await writeFile(file, changed);
      expect(
        await eventually(
          async () => reloads(),
          (count) => count > before,
        ),
      ).toBeGreaterThan(before);
      await body();
    } finally {
      const restoring = reloads();
      await writeFile(file, original);
      await eventually(
        async () => reloads(),
        (count) => count > restoring,
      );
    }
  };

  it(
    verifies(
      'approvals.policy-rechecked',
      'an approved call that a forbid added meanwhile refuses is denied, and nothing is sent',
    ),
    async () => {
      const executionId = await hold(client);
      const form = await finance.decisionForm(executionId);
      await withPolicy(
        (text) =>
          `${text}\n@id("purchase-order-freeze")\nforbid (principal, action == Action::"erp.purchase_orders.create", resource);\n`,
        async () => {
          // The forbid applies to new calls at once: the tool is no longer listed.
          expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('erp.purchase_orders.create');
          expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
          const { answer, result } = await settled(client, executionId);
          expect(result).toMatchObject({ status: 'denied', code: 'policy_denied', result: null });
          expect(result.message).toMatch(/policy changed/);
          expect(answer.isError).toBe(true);
          expect(erp.callsFor(executionId)).toBe(0);
          expect(erp.calls()).toEqual([]);
          const record = (await store.get(executionId)) as Execution;
          expect(record.history.map((change) => change.status)).toEqual(['pending_approval', 'approved', 'denied']);
          expect(record).toMatchObject({ decided_by: approvers.finance.id, claimed_at: null });
          expect(runtime.output()).toContain('no longer allowed by the policy');
        },
      );
    },
  );

  it(
    verifies(
      'approvals.policy-rechecked',
      'an approved call whose policy now asks another group is denied, and nothing is sent',
    ),
    async () => {
      const executionId = await hold(client);
      const form = await finance.decisionForm(executionId);
      const financeStep = '@id("large-purchase-orders")\n@approval("staff")\n@approvers("finance")';
      await withPolicy(
        (text) => text.replace(financeStep, financeStep.replace('"finance"', '"operations"')),
        async () => {
          // Finance decides what it was asked to decide; the policy now wants operations.
          expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
          const { result } = await settled(client, executionId);
          expect(result).toMatchObject({ status: 'denied', code: 'policy_denied' });
          expect(erp.callsFor(executionId)).toBe(0);
          expect(erp.calls()).toEqual([]);
        },
      );
    },
  );

  it(
    verifies('approvals.policy-rechecked', 'an approved call the changed policy still allows (now at once) runs once'),
    async () => {
      const executionId = await hold(client);
      const form = await finance.decisionForm(executionId);
      await withPolicy(
        (text) => text.replace('amount.lessThan(decimal("1000.0"))', 'amount.lessThan(decimal("2000.0"))'),
        async () => {
          expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
          const { result } = await settled(client, executionId);
          expect(result.status).toBe('succeeded');
          expect(erp.callsFor(executionId)).toBe(1);
        },
      );
    },
  );

  it(
    verifies('console.sign-in', 'needs a session: wrong passwords, tampered cookies and signed-out posts are refused'),
    async () => {
      const visitor = new ConsoleSession(runtime.baseUrl);
      const inbox = await visitor.get('/console');
      expect(inbox.status).toBe(303);
      expect(inbox.headers.get('location')).toBe('/console/sign-in?next=%2Fconsole');
      const wrong = await visitor.signIn(approvers.finance.id, 'not-the-password');
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain('Wrong approver id or password');
      const unknown = await new ConsoleSession(runtime.baseUrl).signIn('nobody', 'whatever');
      expect(unknown.status).toBe(401);

      const session = new ConsoleSession(runtime.baseUrl);
      const good = await session.signIn(approvers.finance.id, approvers.finance.password);
      expect(good.status).toBe(303);
      const cookie = good.headers.getSetCookie().find((line) => line.startsWith('gateway_session='));
      expect(cookie).toMatch(/; Path=\/; Max-Age=28800; HttpOnly; SameSite=Lax$/);
      expect((await session.get('/console')).status).toBe(200);

      // A session cookie edited by hand (a group added) is not a session.
      const value = session.cookie('gateway_session') ?? '';
      const [payload = '', mac = ''] = value.split('.');
      const edited = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      edited.groups = ['finance', 'operations'];
      session.setCookie('gateway_session', `${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${mac}`);
      expect((await session.get('/console')).status).toBe(303);
    },
  );

  it(
    verifies(
      'approvals.customer-step-kept',
      'a refund that also needs the customer is never run on finance’s approval alone',
    ),
    async () => {
      const support = await connectAgent(runtime.mcpUrl, demoTokens.support);
      try {
        const { result } = await callTool(support, 'erp.refunds.create', {
          order_reference: 'SO-2024-0042',
          amount: '800',
          currency: 'EUR',
        });
        expect(result).toMatchObject({ status: 'pending_approval' });
        expect(result.message).toMatch(/customer/);
        const executionId = result.execution_id ?? '';
        const form = await finance.decisionForm(executionId);
        // Until the customer confirms, the page offers only Reject, and says why; an approval sent
        // anyway is refused.
        expect(form.page.body).not.toContain('value="approve"');
        expect(form.page.body).toContain('The customer has not confirmed this call yet');
        const approve = await finance.decide(executionId, form, 'approve');
        expect(approve.status).toBe(409);
        expect(approve.body).toContain('The customer has not confirmed this call yet');
        expect(((await store.get(executionId)) as Execution).status).toBe('pending_approval');
        expect((await finance.decide(executionId, form, 'reject', 'Refund policy')).status).toBe(303);
        expect((await statusOf(support, executionId)).result).toMatchObject({ status: 'rejected', code: 'rejected' });
        expect(erp.callsFor(executionId)).toBe(0);
      } finally {
        await support.close();
      }
    },
  );

  it(verifies('console.sign-in', 'sends a signed-in approver only to console pages (no open redirect)'), async () => {
    for (const next of ['https://evil.example/', '//evil.example', '/console/../mcp', 'javascript:alert(1)']) {
      const visitor = new ConsoleSession(runtime.baseUrl);
      const form = await visitor.get('/console/sign-in');
      const csrf = /name="csrf" value="([^"]*)"/.exec(form.body)?.[1] ?? '';
      const answer = await visitor.post('/console/sign-in', {
        csrf,
        next,
        approver: approvers.finance.id,
        password: approvers.finance.password,
      });
      expect(answer.status).toBe(303);
      expect(answer.headers.get('location')).toBe('/console');
    }
  });

  it(
    verifies(
      ['console.csp', 'console.call-page', 'console.inbox'],
      'shows exactly the held arguments, escaped, under a strict CSP',
    ),
    async () => {
      const executionId = await hold(client, {
        ...bigOrder,
        description: 'Chairs <script>alert(1)</script> \u202eevil',
      });
      const inbox = await finance.get('/console');
      expect(inbox.status).toBe(200);
      expect(inbox.body).toContain(`/console/executions/${executionId}`);
      const page = await finance.get(`/console/executions/${executionId}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.body).not.toContain('<script');
      expect(page.body).toContain('Chairs &lt;script&gt;alert(1)&lt;/script&gt; <span class="hidden-char"');
      expect(page.body).toContain('U+202E');
      for (const row of ['/amount', '/currency', '/description', '/vendor_id'])
        expect(page.body).toContain(`<code>${row}</code>`);
      expect(page.body).toContain('<span class="string">1500</span>');
      expect(page.body).toContain('procurement-agent');
      expect(page.body).toContain('large-purchase-orders');
      expect(page.body).toMatch(/Time left<\/dt><dd>23 h 5\d min/);
      const stylesheet = /href="(\/console\/static\/console\.[0-9a-f]{12}\.css)"/.exec(page.body)?.[1] ?? '';
      const css = await finance.get(stylesheet);
      expect(css.status).toBe(200);
      expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
      // Clean up: reject it, so later inbox checks see only what they hold.
      expect((await finance.decide(executionId, await finance.decisionForm(executionId), 'reject')).status).toBe(303);
      expect((await finance.get('/console')).body).not.toContain(executionId);
    },
  );
});

/** Resolves once the wall clock has passed `instant` (ms since the epoch). */
const clockPasses = async (instant: number): Promise<void> => {
  while (Date.now() <= instant) await new Promise((resolve) => setTimeout(resolve, instant - Date.now() + 1));
};

/** The CSRF token of a signed-in session, read from the sign-out form every page carries. */
const csrfOf = async (session: ConsoleSession): Promise<string | undefined> =>
  /name="csrf" value="([^"]*)"/.exec((await session.get('/console')).body)?.[1];

describe('approvals across restarts and crashes', () => {
  let configFile: string;
  let shortConfig: string;
  let mediumConfig: string;

  beforeAll(async () => {
    configFile = await org.configWith({ name: 'restart.config.yaml' });
    shortConfig = await org.configWith({ approvalTime: '3s', name: 'short.config.yaml' });
    mediumConfig = await org.configWith({ approvalTime: '40s', name: 'medium.config.yaml' });
  });
  beforeEach(() => erp.reset());

  it(
    verifies(
      'approvals.restart-resumes',
      'a call pending across a crash stays pending and runs once when approved after the restart',
    ),
    async () => {
      const dataDir = join(org.folder, 'data-pending');
      let runtime = await startGateway(configFile, dataDir);
      let client = await connect(runtime);
      const executionId = await hold(client);
      const finance = await signedIn(runtime.baseUrl, approvers.finance.id, approvers.finance.password);
      await client.close();
      await runtime.stop('SIGKILL');

      runtime = await startGateway(configFile, dataDir);
      try {
        client = await connect(runtime);
        expect((await statusOf(client, executionId)).result.status).toBe('pending_approval');
        // The session survives the restart (its key comes from the data folder); the port may not.
        const again = new ConsoleSession(runtime.baseUrl);
        again.setCookie('gateway_session', finance.cookie('gateway_session') ?? '');
        const form = await again.decisionForm(executionId);
        expect((await again.decide(executionId, form, 'approve')).status).toBe(303);
        expect((await settled(client, executionId)).result.status).toBe('succeeded');
        expect(erp.callsFor(executionId)).toBe(1);
        await client.close();
      } finally {
        await runtime.stop();
      }
    },
  );

  it(
    verifies('approvals.restart-resumes', 'a decision recorded just before a crash runs once after the restart'),
    async () => {
      const dataDir = join(org.folder, 'data-decided');
      let runtime = await startGateway(configFile, dataDir, { GATEWAY_CRASH_AT: 'decided' });
      let client = await connect(runtime);
      const executionId = await hold(client);
      const finance = await signedIn(runtime.baseUrl, approvers.finance.id, approvers.finance.password);
      const form = await finance.decisionForm(executionId);
      await expect(finance.decide(executionId, form, 'approve')).rejects.toThrow();
      expect((await runtime.stop()).code).not.toBe(0);
      expect(erp.callsFor(executionId)).toBe(0);

      runtime = await startGateway(configFile, dataDir);
      try {
        client = await connect(runtime);
        const { result } = await settled(client, executionId);
        expect(result.status).toBe('succeeded');
        expect(erp.callsFor(executionId)).toBe(1);
        await client.close();
      } finally {
        await runtime.stop();
      }
    },
  );

  it(
    verifies(
      'approvals.restart-resumes',
      'an approved call claimed before a crash is settled unknown after the restart, never sent again',
    ),
    async () => {
      const dataDir = join(org.folder, 'data-claimed');
      let runtime = await startGateway(configFile, dataDir, { GATEWAY_CRASH_AT: 'answered' });
      let client = await connect(runtime);
      const executionId = await hold(client);
      const finance = await signedIn(runtime.baseUrl, approvers.finance.id, approvers.finance.password);
      const form = await finance.decisionForm(executionId);
      // The decision itself is answered; the crash comes when the ERP's answer is in.
      expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
      const died = await eventually(
        async () => runtime.child.signalCode,
        (signal) => signal !== null,
      );
      expect(died).toBe('SIGKILL');
      expect(erp.callsFor(executionId)).toBe(1);

      runtime = await startGateway(configFile, dataDir);
      try {
        client = await connect(runtime);
        const { result } = await statusOf(client, executionId);
        expect(result).toMatchObject({ status: 'unknown', code: 'interrupted' });
        expect(erp.callsFor(executionId)).toBe(1);
        await client.close();
      } finally {
        await runtime.stop();
      }
    },
  );

  it(
    verifies(
      ['approvals.expiry', 'approvals.restart-resumes'],
      'expiry holds across restarts: at once when it ran out while down, on time when resumed',
    ),
    async () => {
      const dataDir = join(org.folder, 'data-expiry');
      let runtime = await startGateway(shortConfig, dataDir);
      let client = await connect(runtime);
      const whileDown = await hold(client);
      const shortExpiry = Date.parse((await storeOf(runtime).get(whileDown))?.expires_at ?? '');
      await client.close();
      await runtime.stop('SIGKILL');
      await clockPasses(shortExpiry);

      // Down past the approval time: expired as soon as the runtime is back.
      runtime = await startGateway(shortConfig, dataDir);
      try {
        expect((await storeOf(runtime).get(whileDown))?.status).toBe('expired');
        await runtime.stop();

        // Back within the approval time: the resumed workflow waits only what was left. Down for
        // ten of its forty seconds: had the wait started over at the restart, the call would expire
        // forty seconds after it, at least ten seconds late. (Thirty seconds are left for the restart
        // itself on a busy machine.)
        runtime = await startGateway(mediumConfig, dataDir);
        client = await connect(runtime);
        const resumed = await hold(client);
        const createdAt = Date.parse((await storeOf(runtime).get(resumed))?.created_at ?? '');
        await client.close();
        await runtime.stop('SIGKILL');
        await clockPasses(createdAt + 10_000);
        const restartedAt = Date.now();
        runtime = await startGateway(mediumConfig, dataDir);
        client = await connect(runtime);
        const store = storeOf(runtime);
        expect((await store.get(resumed))?.status).toBe('pending_approval');
        const expired = await eventually(
          () => store.get(resumed),
          (execution) => execution?.status === 'expired',
        );
        const expiredAt = Date.parse(expired?.updated_at ?? '');
        expect(expiredAt).toBeGreaterThanOrEqual(Date.parse(expired?.expires_at ?? ''));
        expect(expiredAt).toBeLessThan(restartedAt + 40_000);
        const { answer, result } = await statusOf(client, resumed);
        expect(result).toMatchObject({ status: 'expired', code: 'approval_expired', result: null });
        expect(answer.isError).toBe(true);
        expect(erp.callsFor(whileDown) + erp.callsFor(resumed)).toBe(0);
        await client.close();
      } finally {
        await runtime.stop();
      }
    },
  );
});
