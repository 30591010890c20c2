// What the /tool/call-tool AWS handler tests run on: the demo organization's configuration and
// its ERP on loopback, the executions table on dynalite, the agents' services wired as the
// functions wire them (real store, sealer, system client), approval runs that record their start,
// and a stand-in for API Gateway's management API that records every request it is sent.
import { createServer, type Server } from 'node:http';
import { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { loadSnapshotFromFile } from '../../infra/local/config-files.js';
import { type Listening, listen } from '../../infra/local/net.js';
import { projectPath } from '../../infra/paths.js';
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import { ApiGatewayConnections } from '../../shared/adapters/api-gateway-connections.js';
import { DynamoDbConnectionClaims } from '../../shared/adapters/dynamodb/connection-claims.js';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import type { ApprovalRunStart } from '../../shared/approvals/approval-runs.js';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { systemClock } from '../../shared/clock.js';
import { formatProblem } from '../../shared/config/resolved.js';
import { uuidV7Ids } from '../../shared/ids.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';
import { unusedPort } from './approval-deps.js';
import { demoAddresses } from './demo-environment.js';
import { startTestStore, type TestStore } from './local-store.js';

export const procurement: AgentIdentity = { id: 'procurement-agent', groups: ['procurement'], customerId: null };
export const support: AgentIdentity = { id: 'support-agent', groups: ['support'], customerId: 'customer-1042' };

export interface ChannelBed {
  readonly testStore: TestStore;
  readonly erp: DemoErp;
  readonly services: CallToolDeps;
  readonly claims: DynamoDbConnectionClaims;
  /** Approval runs started, oldest first. */
  readonly started: ApprovalRunStart[];
  close(): Promise<void>;
}

export const startChannelBed = async (): Promise<ChannelBed> => {
  const testStore = await startTestStore();
  const erp = await startDemoErp({ host: '127.0.0.1', port: 0 });
  const loaded = await loadSnapshotFromFile(projectPath('examples', 'gateway.config.yaml'), {
    ...demoAddresses,
    DEMO_ERP_URL: erp.url,
  });
  if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
  const { snapshot } = loaded;
  const started: ApprovalRunStart[] = [];
  const services: CallToolDeps = {
    store: testStore.store,
    ids: uuidV7Ids,
    clock: systemClock,
    controlPlane: { current: async () => ({ kind: 'active', snapshot }) },
    sealer: new AesSealer(Buffer.alloc(32, 7)),
    systems: new HttpSystemClient(),
    toolServers: { call: unusedPort('the tool-server client') },
    log: { info: () => undefined, warn: () => undefined },
    approvalRuns: {
      start: async (input) => {
        started.push(input);
        return 'started';
      },
      signal: unusedPort('the approval run signal'),
    },
    customerUrl: (id) => `https://api.example.com/customer/calls/${id}`,
  };
  return {
    testStore,
    erp,
    services,
    claims: new DynamoDbConnectionClaims(testStore.dynamodb.documents, 'executions', systemClock),
    started,
    close: async () => {
      await erp.close();
      await testStore.close();
    },
  };
};

export interface ManagementRequest {
  readonly method: string;
  readonly path: string;
  readonly body: Buffer;
  readonly signed: boolean;
}

export interface ManagementApi extends Listening<Server> {
  /** Every request received, oldest first. */
  readonly requests: ManagementRequest[];
  /** Connections the stand-in answers 410 Gone for (the client left). */
  readonly gone: Set<string>;
  /** The real management client's adapter, pointed at the stand-in's stage. */
  readonly connections: ApiGatewayConnections;
}

/** API Gateway's @connections API on loopback: 200 to POST and DELETE, 410 for a connection gone. */
export const startManagementApi = async (stage = 'live'): Promise<ManagementApi> => {
  const requests: ManagementRequest[] = [];
  const gone = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      requests.push({
        method: request.method ?? '',
        path,
        body: Buffer.concat(chunks),
        signed: String(request.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 '),
      });
      const id = decodeURIComponent(path.slice(`/${stage}/@connections/`.length));
      const status = gone.has(id) ? 410 : 200;
      response.writeHead(status, {
        'content-type': 'application/json',
        'x-amzn-errortype': status === 410 ? 'GoneException' : '',
      });
      response.end(status === 410 ? JSON.stringify({ message: 'Gone' }) : '');
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  const client = new ApiGatewayManagementApiClient({
    endpoint: `http://127.0.0.1:${listening.port}/${stage}`,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local-secret' },
  });
  return { ...listening, requests, gone, connections: new ApiGatewayConnections(client) };
};
