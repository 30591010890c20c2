// The embedded store on a thread of its own, as the local runtime runs it: the runtime's store
// requests are served off the gateway's thread, the store's data folder is released when it closes,
// and a store that cannot start says why.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { type ClientRequest, createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoErp } from '../../examples/erp/server.js';
import { startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { LocalOptions } from '../../infra/local/options.js';
import { startLocalRuntime } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
import { anExecution } from '../support/executions.js';
import { startTestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';

const dynamoTarget = /^DynamoDB_20120810\./;

/** DynamoDB requests this thread sends, and those it serves, while `run` runs. */
const dynamoRequestsDuring = async (run: () => Promise<void>) => {
  const counted = { sent: 0, served: 0 };
  const onSent = (message: unknown) => {
    const target = (message as { request: ClientRequest }).request.getHeader('x-amz-target');
    if (typeof target === 'string' && dynamoTarget.test(target)) counted.sent += 1;
  };
  const onServed = (message: unknown) => {
    const target = (message as { request: IncomingMessage }).request.headers['x-amz-target'];
    if (typeof target === 'string' && dynamoTarget.test(target)) counted.served += 1;
  };
  subscribe('http.client.request.start', onSent);
  subscribe('http.server.request.start', onServed);
  try {
    await run();
  } finally {
    unsubscribe('http.client.request.start', onSent);
    unsubscribe('http.server.request.start', onServed);
  }
  return counted;
};

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'gateway-store-thread-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('the embedded store on a thread of its own', () => {
  it(verifies('local.store-thread', "serves the local runtime's store requests off the gateway's thread"), async () => {
    const erp = await startDemoErp({ port: 0 });
    try {
      const counted = await dynamoRequestsDuring(async () => {
        const runtime = await startLocalRuntime(
          LocalOptions.parse({
            port: '0',
            grpcPort: '0',
            demoToolsPort: '0',
            memory: true,
            demoErp: false,
            config: projectPath('examples/gateway.config.yaml'),
          }),
          { variables: { DEMO_ERP_URL: erp.url, DEMO_MCP_URL: 'http://127.0.0.1:9/mcp' }, logLevel: 'ERROR' },
        );
        try {
          const execution = anExecution({ status: 'succeeded' });
          await runtime.store.create(execution);
          expect((await runtime.store.get(execution.execution_id))?.execution_id).toBe(execution.execution_id);
        } finally {
          await runtime.stop();
        }
      });
      // The tables made at start, the configuration, the record written and read back.
      expect(counted.sent).toBeGreaterThanOrEqual(4);
      expect(counted.served).toBe(0);
    } finally {
      await erp.close();
    }
  });

  it(
    verifies('local.store-thread', 'closes its database before its thread ends: the folder opens again, nothing lost'),
    async () => {
      const dataPath = join(folder, 'reopened');
      const execution = anExecution({ status: 'pending_approval' });
      const first = await startTestStore(dataPath, 'gateway-executions', true);
      try {
        await first.store.create(execution);
      } finally {
        await first.close();
      }
      // A store that had not closed its LevelDB would hold the folder's lock, and this open would fail.
      const second = await startTestStore(dataPath, 'gateway-executions', true);
      try {
        expect((await second.store.get(execution.execution_id))?.status).toBe('pending_approval');
        expect(second.dynamodb.openCursors()).toBe(0);
      } finally {
        await second.close();
      }
    },
  );

  it(verifies('local.store-thread', 'says why it could not start, with the error’s code'), async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const started = startLocalDynamoDb({ dataPath: null, port, thread: true });
      await expect(started).rejects.toMatchObject({
        name: 'StoreThreadError',
        code: 'EADDRINUSE',
        message: expect.stringContaining(String(port)),
      });
    } finally {
      taken.close();
    }
  });
});
