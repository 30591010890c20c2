// The organization the harness pushes to the synthesized stack: one system on loopback (a ledger:
// a balance read that runs at once, a transfer that finance approves, a refund the customer
// confirms), its policies, and its credential (a `${secret:…}` when the template gives the MCP
// function a secrets prefix); and how its agent and its people reach the stack.
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { WebSocket } from 'ws';
import { bytesOf } from '../../infra/local/call-tool-websocket.js';
import { documentClient } from '../../infra/local/dynamodb.js';
import { type Listening, listen } from '../../infra/local/net.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbSessionStore } from '../../shared/adapters/dynamodb/console-sessions.js';
import { KmsSessionSigner } from '../../shared/adapters/kms-session-signer.js';
import { encodeSession, type Session } from '../../shared/sessions/session.js';
import { keepSession } from '../../shared/sessions/session-store.js';
import { runProcess } from '../support/spawn.js';
import { type DeployedStack, functionId } from './stack.js';

export const ledgerKey = 'ledger-key-3b9d';
/** The agent: an app client of the agents' pool, its groups from its `agents:` entry by subject. */
export const agent = {
  id: 'treasury-agent',
  clientId: '5treasuryclientid0000000000',
  secret: 'treasury-client-secret',
  groups: ['treasury'],
};
/** The customer the agent acts for (its `agents:` entry's customer), as the customer pool names them. */
export const customer = { id: 'C-4412', name: 'Casey Lane' };

/** The agent's app client registered in the stack's agents' pool, and a token of it in an Authorization header. */
export const agentAuthorization = async (stack: DeployedStack): Promise<Record<string, string>> => {
  const client = { id: agent.clientId, secret: agent.secret };
  await stack.agentPool.addClient(client);
  return { authorization: `Bearer ${await stack.agentPool.token(client, stack.agentPool.scope)}` };
};
export const approver = { id: 'finance-approver', name: 'Farah (Finance)', groups: ['finance'] };

/** An MCP request's headers on the HTTP API, besides the agent's Authorization. */
export const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

/** A JSON-RPC answer's result: a tool's structured content, or the result itself. */
export const structured = (body: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(body);
  const result = typeof parsed === 'object' && parsed !== null && 'result' in parsed ? parsed.result : undefined;
  if (typeof result !== 'object' || result === null) throw new Error(`not a JSON-RPC result: ${body}`);
  const content = 'structuredContent' in result ? result.structuredContent : result;
  return typeof content === 'object' && content !== null ? { ...content } : {};
};

/** A sender of JSON-RPC requests to /mcp with the given headers, one at a time; answers the body of a 200. */
export const mcpSender = (stack: Pick<DeployedStack, 'http'>) => {
  let rpcId = 0;
  return async (method: string, params: Record<string, unknown>, headers: Record<string, string>) => {
    rpcId += 1;
    const answer = await stack.http({
      method: 'POST',
      path: '/mcp',
      headers: { ...mcpHeaders, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: rpcId, method, params }),
    });
    if (answer.functionError !== undefined) throw answer.functionError;
    if (answer.status !== 200) throw new Error(`/mcp answered ${answer.status}: ${answer.body}`);
    return answer.body;
  };
};

/**
 * The Cookie header the console's sign-in ends with (an approver's session, or a customer's for one
 * call): the session kept in the executions table, as the sign-in keeps it, and the cookie naming
 * it signed by the session key in KMS, under the cookie's name over HTTPS.
 */
export const signedInCookie = async (stack: DeployedStack, session: Session): Promise<string> => {
  const environment = stack.functions.get(functionId(stack, 'Console'))?.spec.environment ?? {};
  const { env, endpoints } = stack.operator;
  const credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '' };
  const kms = new KMSClient({ endpoint: endpoints.kms, region: 'local', credentials });
  const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'local', credentials });
  try {
    const sessions = new DynamoDbSessionStore(documentClient(dynamodb), environment.EXECUTIONS_TABLE ?? '');
    await keepSession(sessions, session, Date.now());
    const name = session.use === 'customer' ? '__Host-gateway_customer' : '__Host-gateway_session';
    return `${name}=${await encodeSession(new KmsSessionSigner(kms, environment.SESSION_KEY_ID ?? ''), session)}`;
  } finally {
    kms.destroy();
    dynamodb.destroy();
  }
};

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

/** A required JSON body whose fields are all required short strings. */
const textFields = (names: readonly string[]) => ({
  required: true,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: names,
        properties: Object.fromEntries(names.map((name) => [name, { type: 'string', maxLength: 20 }])),
      },
    },
  },
});

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
    '/refunds': {
      post: {
        operationId: 'refunds.create',
        summary: 'Refund a customer',
        description: "Pays an amount back to the customer's account.",
        requestBody: textFields(['amount']),
        responses: { '201': { description: 'Booked.' } },
      },
    },
    '/transfers': {
      post: {
        operationId: 'transfers.create',
        summary: 'Transfer money',
        description: 'Moves an amount to another account.',
        requestBody: textFields(['to', 'amount']),
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

@id("refunds")
@approval("customer")
permit (principal in Group::"treasury", action == Action::"ledger.refunds.create", resource);
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
    customer: ${customer.id}
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

/**
 * A WebSocket client's connection to the channel: the HTTP status its handshake got (101 when it
 * opened), then, once it sent `message`, what came back and the close code.
 */
export const openChannel = (url: string, headers: Record<string, string>, message: string) =>
  new Promise<{ status: number; received?: { data: Buffer; binary: boolean }[]; code?: number }>((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const received: { data: Buffer; binary: boolean }[] = [];
    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0 });
    });
    socket.on('open', () => socket.send(message));
    socket.on('message', (data, binary) => received.push({ data: bytesOf(data), binary }));
    socket.on('close', (code) => resolve({ status: 101, received, code }));
    socket.on('error', (error) => {
      if (!error.message.startsWith('Unexpected server response')) reject(error);
    });
  });
