// Held-call notices over real HTTP: every channel is told, a failing one is logged and never stops
// the others, and a notice never carries a secret.
import { createServer } from 'node:http';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newLocalAwsCredentials } from '../../infra/local/aws-signature.js';
import { localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { listen } from '../../infra/local/net.js';
import { EventBridgeNotifier } from '../../shared/adapters/eventbridge-notifier.js';
import { type HeldCallNotice, Notifiers, summarize, WebhookNotifier } from '../../shared/approvals/notifier.js';
import { noticeOf } from '../../shared/use-cases/held-call-steps.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/approval-org.js';
import { anExecution, humanStep } from '../support/executions.js';
import { verifies } from '../support/requirements.js';

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const notice: HeldCallNotice = {
  execution_id: '01a2288a-0a23-73e9-bf0d-b2f48fb85d36',
  tool: 'erp.purchase_orders.create',
  agent_id: 'procurement-agent',
  customer_id: null,
  staff_group: 'finance',
  customer_confirms: false,
  summary: '{"amount":"1500"}',
  console_url: 'http://127.0.0.1:8787/console/executions/01a2288a-0a23-73e9-bf0d-b2f48fb85d36',
  expires_at: '2026-11-30T12:00:00.000Z',
  approvals_needed: 1,
  escalated_to: null,
};

describe('notifiers', () => {
  it(
    verifies('notify.channels', 'a webhook gets the notice as JSON, with a Slack-style text line when asked'),
    async () => {
      await new WebhookNotifier(receiver.url, true).heldCall(notice);
      await new WebhookNotifier(receiver.url, false).heldCall({ ...notice, execution_id: 'plain' });
      const withText = await receiver.waitFor((body) => body.execution_id === notice.execution_id);
      expect(withText).toEqual({
        type: 'approval.requested',
        ...notice,
        text: `procurement-agent wants to run erp.purchase_orders.create; group finance decides: ${notice.console_url}`,
      });
      const plain = await receiver.waitFor((body) => body.execution_id === 'plain');
      expect(plain).not.toHaveProperty('text');
    },
  );

  it(
    verifies('quorum.notices-count', 'a webhook’s text line says how many approvals a quorum still needs'),
    async () => {
      await new WebhookNotifier(receiver.url, true).heldCall({ ...notice, execution_id: 'two', approvals_needed: 2 });
      const two = await receiver.waitFor((body) => body.execution_id === 'two');
      expect(two).toMatchObject({
        approvals_needed: 2,
        escalated_to: null,
        text: `procurement-agent wants to run erp.purchase_orders.create; group finance (2 approvals needed) decides: ${notice.console_url}`,
      });
    },
  );

  it(verifies('notify.channels', 'a failing channel is logged and the others are still told'), async () => {
    const warnings: unknown[] = [];
    const log = { info: () => undefined, warn: (...entry: unknown[]) => warnings.push(entry) };
    const closed = await startWebhookReceiver();
    const closedUrl = `${closed.url}?token=S3CRET-IN-URL`;
    await closed.close();
    await new Notifiers(
      [new WebhookNotifier(closedUrl, true, 1_000), new WebhookNotifier(receiver.url, true)],
      log,
    ).heldCall({ ...notice, execution_id: 'second-channel' });
    expect(await receiver.waitFor((body) => body.execution_id === 'second-channel')).toBeDefined();
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).toContain('a notification channel failed');
    expect(JSON.stringify(warnings)).not.toContain('S3CRET-IN-URL');
  });

  it(
    verifies('notify.no-secrets', 'a notice is built from the redacted arguments, shortened, never the sealed ones'),
    () => {
      const execution = anExecution({
        arguments_json: '{"contact_email":"ana@vendor.example","initial_password":"[REDACTED]"}',
        sealed_arguments: 'sealed-blob-that-holds-the-password',
        expires_at: '2026-11-30T12:00:00.000Z',
        decision: {
          effect: 'allow',
          reason: null,
          determining: [],
          step: humanStep({ staff: 'finance', customer: false }),
          config_version: 'v',
        },
      });
      const built = noticeOf({ consoleUrl: (id) => `https://gw.example/console/executions/${id}` }, execution);
      expect(built.summary).toBe(execution.arguments_json);
      expect(JSON.stringify(built)).not.toContain('sealed-blob');
      expect(built).toMatchObject({
        staff_group: 'finance',
        customer_confirms: false,
        expires_at: '2026-11-30T12:00:00.000Z',
      });
      expect(summarize('x'.repeat(2_000))).toHaveLength(500);
    },
  );
});

describe('the EventBridge channel', () => {
  /** A stand-in for the PutEvents API (AWS JSON 1.1) on loopback: EventBridge does not run here. */
  const startEventsEndpoint = async (failed: number) => {
    const requests: { target: string; body: Record<string, unknown> }[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        requests.push({
          target: String(request.headers['x-amz-target']),
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        });
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(
          JSON.stringify({ FailedEntryCount: failed, Entries: [failed > 0 ? { ErrorCode: 'X' } : { EventId: 'e-1' }] }),
        );
      });
    });
    const listening = await listen(server, '127.0.0.1', 0);
    return { ...listening, requests, endpoint: `http://127.0.0.1:${listening.port}` };
  };

  it(
    verifies('notify.channels', 'puts one "Approval requested" event with the notice on the gateway’s bus'),
    async () => {
      const events = await startEventsEndpoint(0);
      const client = new EventBridgeClient(localAwsClientConfig(events.endpoint, newLocalAwsCredentials()));
      try {
        await new EventBridgeNotifier(client, 'approval-gateway-notices').heldCall(notice);
        expect(events.requests).toHaveLength(1);
        const [request] = events.requests;
        expect(request?.target).toBe('AWSEvents.PutEvents');
        expect(request?.body).toEqual({
          Entries: [
            {
              EventBusName: 'approval-gateway-notices',
              Source: 'approval-gateway',
              DetailType: 'Approval requested',
              Detail: JSON.stringify(notice),
            },
          ],
        });
      } finally {
        client.destroy();
        await events.close();
      }
    },
  );

  it(
    verifies(
      'notify.channels',
      'an event the bus refuses is a failed notice (logged by the notifier, never lost silently)',
    ),
    async () => {
      const events = await startEventsEndpoint(1);
      const client = new EventBridgeClient(localAwsClientConfig(events.endpoint, newLocalAwsCredentials()));
      try {
        await expect(new EventBridgeNotifier(client, 'bus').heldCall(notice)).rejects.toThrow(/refused/);
      } finally {
        client.destroy();
        await events.close();
      }
    },
  );
});
