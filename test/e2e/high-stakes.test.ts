// High-stakes approvals end to end, against `npm start`'s entry point as a real process: a
// purchase order that needs two finance approvers, and orders that operations may decide once
// finance has not within the policy's escalation time. The ERP's own call counter proves a call
// runs once when its quorum is reached and not at all before.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
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
import { type ConsoleSession, signedIn } from '../support/console.js';
import { quietLog } from '../support/logs.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

/** A permit for procurement's purchase orders from `from` up to `below`, held for finance with `more`. */
const financePermit = (id: string, more: string, from: string, below: string | null) => `
@id("${id}")
@approval("staff")
@approvers("finance")
${more}
permit (principal in Group::"procurement", action == Action::"erp.purchase_orders.create", resource)
when { context.arguments.amount.greaterThanOrEqual(decimal("${from}"))${below === null ? '' : ` && context.arguments.amount.lessThan(decimal("${below}"))`} };
`;

// Purchase orders by amount: two finance approvers from 1000; from 5000 operations may decide too
// once two seconds passed without a decision; from 9000 only after an hour.
const highStakesPolicies = [
  financePermit('four-eyes-orders', '@quorum("2")', '1000.0', '5000.0'),
  financePermit('orders-operations-after-2s', '@escalate("2s, operations")', '5000.0', '9000.0'),
  financePermit('orders-operations-after-1h', '@escalate("1h, operations")', '9000.0', null),
].join('');

/** Bound on waiting for the escalation (the policy's two seconds, on a busy machine). */
const escalationWaitMs = 30_000;

const order = (amount: string) => ({ vendor_id: 'V-100', amount, currency: 'EUR', description: 'Server racks' });

/** The approval organization with only the ERP and the policies above. */
const highStakesConfig = async (org: ApprovalOrg, webhookUrl: string): Promise<string> => {
  const file = await org.configWith({ webhookUrl, name: 'high-stakes.config.yaml' });
  const text = await readFile(file, 'utf8');
  // The demo tool servers are not started: their systems go, and the policies are this file's.
  const withoutToolServers = text.slice(0, text.indexOf('  - key: everything')) + text.slice(text.indexOf('# Locally'));
  await writeFile(join(dirname(file), 'policies', 'high-stakes.cedar'), highStakesPolicies);
  await writeFile(file, withoutToolServers.replace('- policies/demo.cedar', '- policies/high-stakes.cedar'));
  return file;
};

let erp: DemoErp;
let org: ApprovalOrg;
let webhooks: WebhookReceiver;
let runtime: RuntimeProcess;
let client: Client;
let store: DynamoDbExecutionStore;
let dataDir: string;
let sessions: Record<'finance' | 'finance2' | 'operations' | 'requester', ConsoleSession>;

beforeAll(async () => {
  erp = await startDemoErp();
  org = await approvalOrg();
  webhooks = await startWebhookReceiver();
  dataDir = join(org.folder, 'data');
  runtime = await startRuntimeProcess(
    [
      '--data-dir',
      dataDir,
      '--no-demo-erp',
      '--no-demo-tools',
      '--no-demo-mcp',
      '--config',
      await highStakesConfig(org, webhooks.url),
    ],
    { DEMO_ERP_URL: erp.url, POWERTOOLS_LOG_LEVEL: 'INFO' },
  );
  client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
  store = new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );
  const signIn = (who: keyof typeof approvers) => signedIn(runtime.baseUrl, approvers[who].id, approvers[who].password);
  sessions = {
    finance: await signIn('finance'),
    finance2: await signIn('finance2'),
    operations: await signIn('operations'),
    requester: await signIn('requester'),
  };
});
afterAll(async () => {
  await client?.close();
  await runtime?.stop();
  await webhooks?.close();
  await erp?.close();
  await org?.remove();
});
beforeEach(() => erp.reset());

const statusOf = async (executionId: string) => {
  const answer = await client.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } });
  return ResultObject.parse(answer.structuredContent);
};

const hold = async (amount: string): Promise<string> => {
  const answer = await client.callTool({ name: 'erp.purchase_orders.create', arguments: order(amount) });
  const result = ResultObject.parse(answer.structuredContent);
  expect(result.status).toBe('pending_approval');
  return result.execution_id ?? '';
};

/** The record as the store holds it (the test's own reading, not the gateway's answer). */
const recordOf = async (executionId: string): Promise<Execution> => {
  const record = await store.get(executionId);
  if (record === undefined) throw new Error(`No record for ${executionId}`);
  return record;
};

/** Waits (bounded) until the call has left pending_approval and approved. */
const settled = (executionId: string) =>
  eventually(
    () => statusOf(executionId),
    (result) => result.status !== 'pending_approval' && result.status !== 'approved',
  );

const approve = async (session: ConsoleSession, executionId: string) =>
  session.decide(executionId, await session.decisionForm(executionId), 'approve');

/** The CSRF token of a signed-in session, read from the sign-out form every page carries. */
const csrfOf = async (session: ConsoleSession): Promise<string> =>
  /name="csrf" value="([^"]*)"/.exec((await session.get('/console')).body)?.[1] ?? '';

/** The webhook notices about one call, in the order they came. */
const noticesFor = (executionId: string) =>
  webhooks.received.filter(
    (body): body is Record<string, unknown> =>
      typeof body === 'object' && body !== null && 'execution_id' in body && body.execution_id === executionId,
  );

/** Who approved, as the record keeps it: in order, with the group each decided as. */
const approvalsOf = async (executionId: string) =>
  (await recordOf(executionId)).approvals.map(({ by, group }) => ({ by, group }));

/**
 * The call still waits for its second approval, with finance's one, and nothing was sent; then the
 * second finance approver rejects it, so it leaves nothing open behind.
 */
const stillWaitsWithFinanceOnly = async (executionId: string): Promise<void> => {
  expect(await approvalsOf(executionId)).toEqual([{ by: approvers.finance.id, group: 'finance' }]);
  expect(await statusOf(executionId)).toMatchObject({ status: 'pending_approval', result: null });
  expect(erp.callsFor(executionId)).toBe(0);
  const form = await sessions.finance2.decisionForm(executionId);
  expect((await sessions.finance2.decide(executionId, form, 'reject')).status).toBe(303);
};

describe('two approvers (@quorum("2"))', () => {
  it(
    verifies(
      'high-stakes-e2e.quorum-runs-once',
      'one approval keeps the call pending and sends nothing; the second approver runs it once',
    ),
    async () => {
      const executionId = await hold('1500');
      const notice = await webhooks.waitFor((body) => body.execution_id === executionId);
      expect(notice).toMatchObject({ staff_group: 'finance', approvals_needed: 2, escalated_to: null });

      expect((await approve(sessions.finance, executionId)).status).toBe(303);
      expect(await statusOf(executionId)).toMatchObject({ status: 'pending_approval', result: null });
      // The group hears how many approvals are still needed.
      await webhooks.waitFor((body) => body.execution_id === executionId && body.approvals_needed === 1);
      expect(erp.callsFor(executionId)).toBe(0);
      const partial = await recordOf(executionId);
      expect(partial).toMatchObject({ status: 'pending_approval', decided_by: null });
      expect(await approvalsOf(executionId)).toEqual([{ by: approvers.finance.id, group: 'finance' }]);

      // The second approver sees how far the quorum is, and who approved.
      const form = await sessions.finance2.decisionForm(executionId);
      expect(form.page.body).toContain('1 of 2 approvals');
      // Who approved: their name or id (not the second approver's own id in the page's header).
      expect(form.page.body).toMatch(/Farah \(Finance\)|finance-approver(?!-2)/);
      expect((await sessions.finance2.decide(executionId, form, 'approve')).status).toBe(303);
      expect(await settled(executionId)).toMatchObject({
        status: 'succeeded',
        code: null,
        result: { vendor_id: 'V-100', amount: '1500', currency: 'EUR', status: 'placed' },
      });
      expect(erp.callsFor(executionId)).toBe(1);
      const record = await recordOf(executionId);
      expect(record.history.map((change) => change.status)).toEqual(['pending_approval', 'approved', 'succeeded']);
      expect(record.decided_by).toBe(approvers.finance2.id);
      expect(await approvalsOf(executionId)).toEqual([
        { by: approvers.finance.id, group: 'finance' },
        { by: approvers.finance2.id, group: 'finance' },
      ]);
    },
  );

  it(
    verifies('high-stakes-e2e.same-approver-refused', 'the first approver approving again is refused and counted once'),
    async () => {
      const executionId = await hold('2500');
      const form = await sessions.finance.decisionForm(executionId);
      expect((await sessions.finance.decide(executionId, form, 'approve')).status).toBe(303);
      // The same form sent again (a second click, the back button): refused, and the page says why.
      const again = await sessions.finance.decide(executionId, form, 'approve');
      expect(again.status).toBeGreaterThanOrEqual(400);
      expect(again.body).toMatch(/already approved|approved (this call )?already/i);
      expect((await sessions.finance.get(`/console/executions/${executionId}`)).body).not.toContain('value="approve"');
      await stillWaitsWithFinanceOnly(executionId);
    },
  );

  it(
    verifies(
      'high-stakes-e2e.requester-refused',
      'the requester, an approver of the group, never adds the missing approval',
    ),
    async () => {
      const executionId = await hold('3500');
      const form = await sessions.finance.decisionForm(executionId);
      expect((await sessions.finance.decide(executionId, form, 'approve')).status).toBe(303);
      const ownPage = await sessions.requester.get(`/console/executions/${executionId}`);
      expect(ownPage.body).toContain('cannot decide a call you made yourself');
      expect(ownPage.body).not.toContain('name="outcome"');
      const own = await sessions.requester.post(`/console/executions/${executionId}/decision`, {
        csrf: await csrfOf(sessions.requester),
        arguments_hash: form.argumentsHash,
        outcome: 'approve',
      });
      expect(own.status).toBe(403);
      expect(own.body).toContain('cannot decide a call you made yourself');
      await stillWaitsWithFinanceOnly(executionId);
    },
  );

  it(
    verifies('high-stakes-e2e.rejection-ends', 'a rejection after one approval ends the call rejected, nothing sent'),
    async () => {
      const executionId = await hold('4500');
      expect((await approve(sessions.finance, executionId)).status).toBe(303);
      const form = await sessions.finance2.decisionForm(executionId);
      expect((await sessions.finance2.decide(executionId, form, 'reject', 'Not this quarter')).status).toBe(303);
      expect(await statusOf(executionId)).toMatchObject({ status: 'rejected', code: 'rejected', result: null });
      const record = await recordOf(executionId);
      expect(record).toMatchObject({ status: 'rejected', decided_by: approvers.finance2.id });
      expect(await approvalsOf(executionId)).toEqual([{ by: approvers.finance.id, group: 'finance' }]);
      expect(erp.callsFor(executionId)).toBe(0);
      expect(erp.calls()).toEqual([]);
    },
  );
});

/** `npm run executions -- --json` through the running gateway's store: this call's audit line. */
const auditLine = async (executionId: string): Promise<Record<string, unknown>> => {
  const listed = await runProcess(
    process.execPath,
    [
      '--import',
      'tsx',
      projectPath('scripts/executions.ts'),
      '--data-dir',
      dataDir,
      '--json',
      '--agent',
      'procurement-agent',
    ],
    { cwd: projectPath() },
  );
  expect(listed.code, listed.output).toBe(0);
  const lines = listed.stdout.split('\n').filter((text) => text.includes(executionId));
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '{}');
};

describe('escalation (@escalate)', () => {
  it(
    verifies(
      'high-stakes-e2e.not-before-escalation',
      'the escalation group neither sees nor decides a call before its time',
    ),
    async () => {
      const executionId = await hold('9500');
      expect((await recordOf(executionId)).decision?.step?.escalation).toEqual({
        after_ms: 3_600_000,
        group: 'operations',
      });
      const { argumentsHash, page } = await sessions.finance.decisionForm(executionId);
      expect(page.body).not.toMatch(/Escalated to/i);
      const operations = sessions.operations;
      expect((await operations.get('/console')).body).not.toContain(executionId);
      expect((await operations.get(`/console/executions/${executionId}`)).status).toBe(403);
      const early = await operations.post(`/console/executions/${executionId}/decision`, {
        csrf: await csrfOf(operations),
        arguments_hash: argumentsHash,
        outcome: 'approve',
      });
      expect(early.status).toBe(403);
      expect(await recordOf(executionId)).toMatchObject({
        status: 'pending_approval',
        approvals: [],
        escalated_at: null,
      });
      expect(erp.callsFor(executionId)).toBe(0);
      expect(
        (await sessions.finance.decide(executionId, await sessions.finance.decisionForm(executionId), 'reject')).status,
      ).toBe(303);
    },
  );

  it(
    verifies(
      'high-stakes-e2e.escalation-decides',
      'after two seconds without a decision operations is notified once and decides; the audit shows the escalation',
    ),
    async () => {
      const executionId = await hold('6000');
      const createdAt = Date.parse((await recordOf(executionId)).created_at);
      // The event: the escalation group is told, and the call is in its inbox.
      const escalated = await webhooks.waitFor(
        (body) => body.execution_id === executionId && body.escalated_to === 'operations',
        escalationWaitMs,
      );
      expect(escalated).toMatchObject({
        approvals_needed: 1,
        console_url: `${runtime.baseUrl}/console/executions/${executionId}`,
      });
      const inbox = await eventually(
        () => sessions.operations.get('/console'),
        (page) => page.body.includes(executionId),
        escalationWaitMs,
      );
      expect(inbox.body).toContain(executionId);

      const escalatedAt = (await recordOf(executionId)).escalated_at;
      const form = await sessions.operations.decisionForm(executionId);
      expect(form.page.body).toMatch(/Escalated to operations/i);
      expect((await sessions.operations.decide(executionId, form, 'approve')).status).toBe(303);
      expect(await settled(executionId)).toMatchObject({
        status: 'succeeded',
        result: { amount: '6000', status: 'placed' },
      });
      expect(erp.callsFor(executionId)).toBe(1);

      const record = await recordOf(executionId);
      expect(record.decided_by).toBe(approvers.operations.id);
      expect(await approvalsOf(executionId)).toEqual([{ by: approvers.operations.id, group: 'operations' }]);
      expect(record.escalated_at).toBe(escalatedAt);
      expect(Date.parse(record.escalated_at ?? '')).toBeGreaterThanOrEqual(createdAt + 2_000);
      // Escalated once: one notice to operations, one time on the record, the same in the audit.
      expect(noticesFor(executionId).filter((body) => body.escalated_to === 'operations')).toHaveLength(1);
      expect(await auditLine(executionId)).toMatchObject({
        escalated_to: 'operations',
        escalated_at: record.escalated_at,
        approvals: [{ by: approvers.operations.id, group: 'operations' }],
        decided_by: approvers.operations.id,
      });
    },
  );
});
