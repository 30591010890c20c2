// The embedded store answers only requests signed with its run's credential: any other local
// process gets a refusal and learns nothing, and the store's own clients work as before.
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newLocalAwsCredentials } from '../../infra/local/aws-signature.js';
import type { Execution } from '../../shared/executions/execution.js';
import { signedAwsCall, signedAwsHeaders, unsignedAwsCall } from '../support/aws-requests.js';
import { anExecution } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';

const tableName = 'executions';
let test: TestStore;
let pending: Execution;

beforeAll(async () => {
  test = await startTestStore(null, tableName);
  pending = anExecution({ status: 'pending_approval' });
  await test.store.create(pending);
});
afterAll(async () => {
  await test?.close();
});

const scan = {
  service: 'dynamodb' as const,
  target: 'DynamoDB_20120810.Scan',
  body: JSON.stringify({ TableName: tableName }),
};

describe('who may call the embedded store', () => {
  it(
    verifies(
      'local.endpoints-authenticated',
      'refuses a Scan without a signature, with another credential, or with a forged one, and reveals no record',
    ),
    async () => {
      const endpoint = test.dynamodb.endpoint;
      const other = newLocalAwsCredentials();
      const attempts = [
        await unsignedAwsCall(endpoint, scan),
        await signedAwsCall(endpoint, other, scan),
        await signedAwsCall(
          endpoint,
          { accessKeyId: test.dynamodb.credentials.accessKeyId, secretAccessKey: other.secretAccessKey },
          scan,
        ),
        // dynalite itself accepts any well-formed signature: this one only looks right.
        await unsignedAwsCall(endpoint, scan, {
          authorization: `AWS4-HMAC-SHA256 Credential=${test.dynamodb.credentials.accessKeyId}/20260101/local/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
          'x-amz-date': '20260101T000000Z',
        }),
      ];
      for (const refused of attempts) {
        expect(refused.status).toBe(403);
        const text = await refused.text();
        expect(JSON.parse(text)).toMatchObject({ __type: 'UnrecognizedClientException' });
        expect(text).not.toContain(pending.execution_id);
      }
      // The same request signed with the store's credential is answered.
      const allowed = await signedAwsCall(endpoint, test.dynamodb.credentials, scan);
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain(pending.execution_id);
    },
  );

  it(verifies('local.endpoints-authenticated', 'refuses a forged write and the record stays as it was'), async () => {
    const approve = {
      service: 'dynamodb' as const,
      target: 'DynamoDB_20120810.UpdateItem',
      body: JSON.stringify({
        TableName: tableName,
        Key: { execution_id: { S: pending.execution_id }, agent_id: { S: pending.agent_id } },
        UpdateExpression: 'SET #status = :approved',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':approved': { S: 'approved' } },
      }),
    };
    expect((await unsignedAwsCall(test.dynamodb.endpoint, approve)).status).toBe(403);
    expect((await signedAwsCall(test.dynamodb.endpoint, newLocalAwsCredentials(), approve)).status).toBe(403);
    const { Item } = await test.dynamodb.client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { execution_id: { S: pending.execution_id }, agent_id: { S: pending.agent_id } },
        ConsistentRead: true,
      }),
    );
    expect(Item?.status).toEqual({ S: 'pending_approval' });
    expect(await test.store.get(pending.execution_id)).toMatchObject({ status: 'pending_approval' });
  });

  it(verifies('local.endpoints-authenticated', 'a signed body that was changed on the way is refused'), async () => {
    const headers = await signedAwsHeaders(test.dynamodb.endpoint, test.dynamodb.credentials, {
      ...scan,
      body: JSON.stringify({ TableName: 'nothing-to-see' }),
    });
    const swapped = await fetch(test.dynamodb.endpoint, { method: 'POST', headers, body: scan.body });
    expect(swapped.status).toBe(403);
  });
});
