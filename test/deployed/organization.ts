// The organization the harness pushes to the synthesized stack: one system on loopback (a ledger:
// a balance read that runs at once, a transfer that finance approves), its policies, and its
// credential (a `${secret:…}` when the template gives the MCP function a secrets prefix).
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { type Listening, listen } from '../../infra/local/net.js';
import { projectPath } from '../../infra/paths.js';
import { runProcess } from '../support/spawn.js';
import type { DeployedStack } from './stack.js';

export const ledgerKey = 'ledger-key-3b9d';
/** The agent: an app client of the agents' pool, its groups from its `agents:` entry by subject. */
export const agent = {
  id: 'treasury-agent',
  clientId: '5treasuryclientid0000000000',
  secret: 'treasury-client-secret',
  groups: ['treasury'],
};

/** The agent's app client registered in the stack's agents' pool, and a token of it in an Authorization header. */
export const agentAuthorization = async (stack: DeployedStack): Promise<Record<string, string>> => {
  const client = { id: agent.clientId, secret: agent.secret };
  await stack.agentPool.addClient(client);
  return { authorization: `Bearer ${await stack.agentPool.token(client, stack.agentPool.scope)}` };
};
export const approver = { id: 'finance-approver', name: 'Farah (Finance)', groups: ['finance'] };

export interface Ledger extends Listening<Server> {
  readonly url: string;
  /** Each request the ledger got: method, path and headers. */
  readonly requests: { method: string; path: string; headers: IncomingHttpHeaders }[];
}

export const startLedger = async (): Promise<Ledger> => {
  const requests: Ledger['requests'] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers });
    request.resume();
    request.on('end', () => {
      if (request.headers['x-api-key'] !== ledgerKey) {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}');
      } else if (request.method === 'GET') {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"account":"A-1","balance":"1250.00"}');
      } else {
        response.writeHead(201, { 'content-type': 'application/json' }).end('{"transfer":"T-77","state":"booked"}');
      }
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return { ...listening, url: `http://127.0.0.1:${listening.port}`, requests };
};

const openapi = {
  openapi: '3.1.0',
  info: { title: 'Ledger', version: '1.0.0' },
  paths: {
    '/balances/{account}': {
      get: {
        operationId: 'balances.get',
        summary: 'Read a balance',
        description: "An account's balance.",
        parameters: [{ name: 'account', in: 'path', required: true, schema: { type: 'string', maxLength: 20 } }],
        responses: { '200': { description: 'The balance.' } },
      },
    },
    '/transfers': {
      post: {
        operationId: 'transfers.create',
        summary: 'Transfer money',
        description: 'Moves an amount to another account.',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['to', 'amount'],
                properties: { to: { type: 'string', maxLength: 20 }, amount: { type: 'string', maxLength: 20 } },
              },
            },
          },
        },
        responses: { '201': { description: 'Booked.' } },
      },
    },
  },
};

const policies = `@id("balances")
permit (principal in Group::"treasury", action == Action::"ledger.balances.get", resource);

@id("transfers")
@approval("staff")
@approvers("finance")
permit (principal in Group::"treasury", action == Action::"ledger.transfers.create", resource);
`;

/** Writes the configuration into `folder`; its credential is `credential` as written. */
export const writeOrganization = async (
  folder: string,
  ledgerUrl: string,
  credential: string,
  approvalTime = '1h',
): Promise<string> => {
  await writeFile(join(folder, 'ledger.openapi.json'), JSON.stringify(openapi));
  await writeFile(join(folder, 'ledger.cedar'), policies);
  const file = join(folder, 'gateway.config.yaml');
  await writeFile(
    file,
    `settings:
  approval_time: ${approvalTime}
systems:
  - key: ledger
    base_url: ${ledgerUrl}
    openapi: ledger.openapi.json
    credentials:
      type: api_key
      header: X-Api-Key
      value: ${credential}
    timeout: 10s
agents:
  - id: ${agent.id}
    subject: ${agent.clientId}
    groups: [${agent.groups.join(', ')}]
policies:
  - ledger.cedar
`,
  );
  return file;
};

/** Pushes a configuration as an operator would: `npm run config:push` with the stack's outputs. */
export const pushConfiguration = async (stack: DeployedStack, file: string): Promise<string> => {
  const { outputs, operator } = stack;
  const run = await runProcess(
    process.execPath,
    [
      '--import',
      'tsx',
      projectPath('scripts', 'config-push.ts'),
      '--table',
      outputs.ConfigTable ?? '',
      '--bucket',
      outputs.ConfigBucket ?? '',
      '--key',
      outputs.ConfigSigningKeyArn ?? '',
      '--region',
      'local',
      '--endpoint',
      operator.endpoints.dynamodb,
      '--s3-endpoint',
      operator.endpoints.s3,
      '--kms-endpoint',
      operator.endpoints.kms,
      file,
    ],
    { cwd: projectPath(), env: { PATH: process.env.PATH ?? '', ...operator.env }, timeoutMs: 120_000 },
  );
  if (run.code !== 0) throw new Error(`config:push failed: ${run.output}`);
  return run.stdout;
};
