// The demo organization, copied for approval tests and adjusted: an approver whose id is an
// agent's (to prove a requester never approves), the vendor portal grant held for finance (a tool
// with a secret argument), webhooks to a local receiver, and the approval time of the test's choice.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { type Listening, listen } from '../../infra/local/net.js';
import { projectPath } from '../../infra/paths.js';
import { temporaryFolder } from './runtime-process.js';

export const approvers = {
  finance: { id: 'finance-approver', password: 'demo-finance-password' },
  /** The demo's second finance approver. */
  finance2: { id: 'finance-approver-2', password: 'demo-finance-2-password' },
  operations: { id: 'operations-approver', password: 'demo-operations-password' },
  /** Same id as the agent that makes the calls, and in the deciding group. */
  requester: { id: 'procurement-agent', password: 'requester-password' },
} as const;

export interface ApprovalOrg {
  readonly folder: string;
  /** Writes a configuration with this approval time and answers its path. */
  configWith(options: { approvalTime?: string; name?: string; webhookUrl?: string | null }): Promise<string>;
  remove(): Promise<void>;
}

export const approvalOrg = async (): Promise<ApprovalOrg> => {
  const folder = await temporaryFolder('gateway-approvals-');
  const org = join(folder.path, 'org');
  await cp(projectPath('examples'), org, { recursive: true });
  const policies = join(org, 'policies', 'demo.cedar');
  const policyText = await readFile(policies, 'utf8');
  await writeFile(
    policies,
    `${policyText.replace(', Action::"erp.vendors.grant_portal_access"', '')}
// Portal logins for vendors: finance approves them.
@id("portal-access-approval")
@approval("staff")
@approvers("finance")
permit (principal in Group::"procurement", action == Action::"erp.vendors.grant_portal_access", resource);
`,
  );
  const original = await readFile(join(org, 'gateway.config.yaml'), 'utf8');
  return {
    folder: folder.path,
    configWith: async ({ approvalTime = '24h', name = 'gateway.config.yaml', webhookUrl = null }) => {
      let text = original.replace('approval_time: 24h', `approval_time: ${approvalTime}`);
      if (webhookUrl !== null) {
        text = text.replace(
          'allowed_staleness: 15m',
          `allowed_staleness: 15m\n  notifications:\n    webhooks:\n      - url: ${webhookUrl}\n        text: true`,
        );
      }
      text = text.replace(
        'approvers:\n',
        `approvers:
  - id: ${approvers.requester.id}
    password: ${approvers.requester.password}
    groups: [finance]
`,
      );
      const file = join(org, name);
      await writeFile(file, text);
      return file;
    },
    remove: () => folder.remove(),
  };
};

/** A webhook receiver on loopback that keeps every JSON body it is sent. */
export interface WebhookReceiver extends Listening<Server> {
  readonly url: string;
  readonly received: unknown[];
  /** Waits (bounded) until a body matching `predicate` arrives. */
  waitFor(predicate: (body: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

export const startWebhookReceiver = async (): Promise<WebhookReceiver> => {
  const received: unknown[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        received.push({ unparsable: Buffer.concat(chunks).toString('utf8') });
      }
      response.writeHead(204).end();
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  const waitFor = async (predicate: (body: Record<string, unknown>) => boolean, timeoutMs = 60_000) => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const found = received.find(
        (body): body is Record<string, unknown> =>
          typeof body === 'object' && body !== null && predicate(body as Record<string, unknown>),
      );
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`No webhook call matched within ${timeoutMs} ms; received ${JSON.stringify(received)}`);
  };
  return { ...listening, url: `http://127.0.0.1:${listening.port}/hooks/approvals`, received, waitFor };
};

/** Polls until `read` answers something `done` accepts (bounded; the tests never wait on a clock). */
export const eventually = async <T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};
