// `npm start` as a developer lives with it: Ctrl-C stops it cleanly, starting again on the same
// data folder keeps everything, and two runtimes never share one folder.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { ResultObject } from '../../shared/result.js';
import { anExecution } from '../support/executions.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
beforeAll(async () => {
  folder = await temporaryFolder('gateway-runtime-');
});
afterAll(async () => {
  await folder.remove();
});

const storeAt = (runtime: RuntimeProcess) =>
  new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );

const statusOver = async (mcpUrl: string, executionId: string) => {
  const client = new Client({ name: 'lifecycle-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${demoTokens.procurement}` } },
    }),
  );
  try {
    const answer = await client.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } });
    return ResultObject.parse(answer.structuredContent);
  } finally {
    await client.close();
  }
};

describe('the local runtime on a data folder', () => {
  it(verifies('local.persistence', 'stops cleanly on Ctrl-C and keeps executions for the next start'), async () => {
    const execution = anExecution({ status: 'succeeded', result_json: '{"purchase_order":"PO-7"}' });
    const first = await startRuntimeProcess(['--data-dir', folder.path]);
    await storeAt(first).create(execution);
    expect((await statusOver(first.mcpUrl, execution.execution_id)).status).toBe('succeeded');
    const stopped = await first.stop('SIGINT');
    expect(stopped.code).toBe(0);
    expect(stopped.output).toContain('Stopped.');

    const second = await startRuntimeProcess(['--data-dir', folder.path]);
    try {
      expect(await statusOver(second.mcpUrl, execution.execution_id)).toMatchObject({
        status: 'succeeded',
        result: { purchase_order: 'PO-7' },
      });
    } finally {
      expect((await second.stop('SIGTERM')).code).toBe(0);
    }
  }, 180_000);

  it(verifies(
    'local.single-owner',
    'refuses a second runtime on a folder in use, and the first keeps serving',
  ), async () => {
    const first = await startRuntimeProcess(['--data-dir', folder.path]);
    try {
      await expect(startRuntimeProcess(['--data-dir', folder.path])).rejects.toThrow(
        /in use by another gateway \(process \d+\)/,
      );
      const execution = anExecution();
      await storeAt(first).create(execution);
      expect((await statusOver(first.mcpUrl, execution.execution_id)).status).toBe('pending_approval');
    } finally {
      await first.stop();
    }
  }, 180_000);

  it(verifies('local.persistence', 'keeps nothing with --memory'), async () => {
    const execution = anExecution();
    const first = await startRuntimeProcess(['--memory']);
    await storeAt(first).create(execution);
    await first.stop();
    const second = await startRuntimeProcess(['--memory']);
    try {
      expect((await statusOver(second.mcpUrl, execution.execution_id)).code).toBe('not_found');
    } finally {
      await second.stop();
    }
  }, 180_000);

  it(verifies('config.clear-errors', 'refuses to start on an invalid configuration and says where'), async () => {
    const { writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const file = join(folder.path, 'broken.yaml');
    await writeFile(file, 'settings:\n  approval_time: soon\nagents: []\n');
    await expect(startRuntimeProcess(['--memory', '--config', file])).rejects.toThrow(
      /broken\.yaml:2: settings\.approval_time: .*"soon"/,
    );
  });
});
