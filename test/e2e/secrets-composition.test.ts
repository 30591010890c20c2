// Secrets marked under schema composition (allOf, anyOf, oneOf, prefixItems, items, nested, and
// FastAPI's Optional[SecretStr]) end to end, against `npm start`'s entry point on a disk-backed
// store: in a held call's arguments and in the system's answers, no secret value reaches the agent,
// the webhook notice, the console page, the runtime's log, the table or the data folder's files.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { type Listening, listen } from '../../infra/local/net.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { ResultObject } from '../../shared/result.js';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../support/approval-org.js';
import { signedIn } from '../support/console.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

/** Every field holds its secret under another composition form; none is secret by its name. */
const accountFields = {
  owner: { type: 'string' },
  // FastAPI: Optional[SecretStr]
  portal_login: { anyOf: [{ type: 'string', format: 'password', writeOnly: true }, { type: 'null' }] },
  recovery: { allOf: [{ type: 'string' }, { format: 'password' }] },
  backup: { oneOf: [{ type: 'string', 'x-sensitive': true }, { type: 'integer' }] },
  pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string', format: 'password' }] },
  phrases: { type: 'array', items: { anyOf: [{ type: 'string', format: 'password' }, { type: 'null' }] } },
  nested: {
    type: 'object',
    properties: { deep: { allOf: [{ anyOf: [{ oneOf: [{ type: 'string', format: 'password' }] }] }] } },
  },
};

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const account = { type: 'object', properties: { id: { type: 'string' }, ...accountFields } };

const vaultDocument = {
  openapi: '3.1.0',
  info: { title: 'Vault', version: '1' },
  paths: {
    '/accounts': {
      post: {
        operationId: 'createAccount',
        requestBody: { required: true, ...json({ type: 'object', required: ['owner'], properties: accountFields }) },
        responses: { '201': { description: 'Created', ...json(account) } },
      },
    },
    '/accounts/{id}': {
      get: {
        operationId: 'getAccount',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The account', ...json(account) } },
      },
    },
  },
};

const policies = `@id("account-creation")
@approval("staff")
@approvers("finance")
permit (principal in Group::"procurement", action == Action::"vault.create_account", resource);

@id("account-reads")
permit (principal in Group::"procurement", action == Action::"vault.get_account", resource);
`;

const finance = { id: 'finance-approver', password: 'composition-finance-password' };

const configText = (vaultUrl: string, webhookUrl: string) => `settings:
  enabled: true
  approval_time: 1h
  allowed_staleness: 15m
  notifications:
    webhooks:
      - url: ${webhookUrl}
        text: true
systems:
  - key: vault
    base_url: ${vaultUrl}
    openapi: vault.json
    credentials:
      type: none
agents:
  - id: procurement-agent
    token: ${demoTokens.procurement}
    groups: [procurement]
approvers:
  - id: ${finance.id}
    name: Farah (Finance)
    password: ${finance.password}
    groups: [finance]
policies:
  - vault.cedar
`;

// Values planted as secrets: in the agent's arguments, and in the system's answers.
const sent = {
  portal: 'Zq-sent-portal-4471',
  recovery: 'Zq-sent-recovery-8813',
  backup: 'Zq-sent-backup-2290',
  pair: 'Zq-sent-pair-6604',
  phrase: 'Zq-sent-phrase-1937',
  deep: 'Zq-sent-deep-5528',
};
const answered = {
  portal: 'Zq-answer-portal-3106',
  recovery: 'Zq-answer-recovery-7742',
  backup: 'Zq-answer-backup-9051',
  pair: 'Zq-answer-pair-2468',
  phrase: 'Zq-answer-phrase-1359',
  deep: 'Zq-answer-deep-8024',
};
const secrets = [...Object.values(sent), ...Object.values(answered)];
const owner = 'Owner-Ana-Qx81-visible';

const withSecrets = (values: typeof sent) => ({
  owner,
  portal_login: values.portal,
  recovery: values.recovery,
  backup: values.backup,
  pair: ['ana', values.pair],
  phrases: [values.phrase, null],
  nested: { deep: values.deep },
});

const redacted = {
  owner,
  portal_login: '[REDACTED]',
  recovery: '[REDACTED]',
  backup: '[REDACTED]',
  pair: ['ana', '[REDACTED]'],
  phrases: ['[REDACTED]', null],
  nested: { deep: '[REDACTED]' },
};

/** The system: keeps what it is sent and answers every account with the answer's secrets. */
const startVault = async () => {
  const received: { method: string; url: string; body: unknown }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        body: text === '' ? null : JSON.parse(text),
      });
      response
        .writeHead(request.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: 'A-1', ...withSecrets(answered) }));
    });
  });
  const listening: Listening<Server> = await listen(server, '127.0.0.1', 0);
  return { ...listening, url: `http://127.0.0.1:${listening.port}`, received };
};

const filesUnder = async (folder: string): Promise<string[]> =>
  (await readdir(folder, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

const secretsIn = (text: string) => secrets.filter((secret) => text.includes(secret));

describe('secrets marked under schema composition', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let vault: Awaited<ReturnType<typeof startVault>>;
  let webhooks: WebhookReceiver;
  let runtime: RuntimeProcess;
  let client: Client;
  let dataDir: string;

  beforeAll(async () => {
    folder = await temporaryFolder('gateway-secrets-composition-');
    vault = await startVault();
    webhooks = await startWebhookReceiver();
    await writeFile(join(folder.path, 'vault.json'), JSON.stringify(vaultDocument, null, 2));
    await writeFile(join(folder.path, 'vault.cedar'), policies);
    const configFile = join(folder.path, 'gateway.config.yaml');
    await writeFile(configFile, configText(vault.url, webhooks.url));
    dataDir = join(folder.path, 'data');
    runtime = await startRuntimeProcess(['--data-dir', dataDir, '--no-demo-erp', '--config', configFile], {
      POWERTOOLS_LOG_LEVEL: 'INFO',
    });
    client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
  });
  afterAll(async () => {
    await client?.close();
    await runtime?.stop();
    await webhooks?.close();
    await vault?.close();
    await folder?.remove();
  });

  const callTool = async (name: string, args: Record<string, unknown>) => {
    const answer = await client.callTool({ name, arguments: args });
    return { text: JSON.stringify(answer), result: ResultObject.parse(answer.structuredContent) };
  };

  it(
    verifies(
      ['secrets.composition', 'notify.no-secrets'],
      'keeps secrets under allOf / anyOf / oneOf / prefixItems / items / Optional[SecretStr] out of every answer, notice, page, log line, table item and data file',
    ),
    async () => {
      const agentSaw: string[] = [];
      const leaks: Record<string, string[]> = {};

      // A held call: the arguments hold the secrets.
      const held = await callTool('vault.create_account', withSecrets(sent));
      agentSaw.push(held.text);
      expect(held.result).toMatchObject({ status: 'pending_approval' });
      const executionId = held.result.execution_id ?? '';

      const notice = JSON.stringify(await webhooks.waitFor((body) => body.execution_id === executionId));
      expect(notice).toContain(owner);
      leaks.notice = secretsIn(notice);

      const approver = await signedIn(runtime.baseUrl, finance.id, finance.password);
      const form = await approver.decisionForm(executionId);
      expect(form.page.body).toContain(owner);
      leaks.console = secretsIn(form.page.body);
      expect((await approver.decide(executionId, form, 'approve')).status).toBe(303);

      const done = await eventually(
        () => callTool('get_execution_status', { execution_id: executionId }),
        ({ result }) => result.status !== 'pending_approval' && result.status !== 'approved',
      );
      agentSaw.push(done.text);
      // The system got the secrets as the agent sent them.
      expect(vault.received[0]).toEqual({ method: 'POST', url: '/accounts', body: withSecrets(sent) });
      expect(done.result.status).toBe('succeeded');

      // A direct read: the answer holds the secrets.
      const read = await callTool('vault.get_account', { id: 'A-1' });
      agentSaw.push(read.text);
      expect(read.result.status).toBe('succeeded');
      leaks.agent = secretsIn(agentSaw.join('\n'));

      // The table, read raw.
      const dump = await new DynamoDBClient(
        localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials),
      ).send(new ScanCommand({ TableName: localTableNames.executions }));
      const table = JSON.stringify(dump.Items);
      expect(table).toContain(owner);
      expect(table).toContain(executionId);
      leaks.table = secretsIn(table);

      // The runtime's log, then the store's files once it has stopped and written everything.
      expect(runtime.output()).toContain('call waiting for approval');
      const { output } = await runtime.stop();
      leaks.log = secretsIn(output);
      const files = await filesUnder(dataDir);
      const contents = Buffer.concat(await Promise.all(files.map((file) => readFile(file))));
      expect(contents.includes(owner)).toBe(true);
      leaks.files = secrets.filter((secret) => contents.includes(secret));

      expect(leaks).toEqual({ notice: [], console: [], agent: [], table: [], log: [], files: [] });
      // The agent reads each answer with its secrets hidden, and everything else as it was.
      expect(done.result.result).toEqual({ id: 'A-1', ...redacted });
      expect(read.result.result).toEqual({ id: 'A-1', ...redacted });
    },
  );
});
