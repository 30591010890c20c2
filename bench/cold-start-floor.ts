// The cold-start floor, bundled as a function is (infra/bundling) and timed beside the functions.
// Importing it makes what every function needs before its first answer, as the functions make it,
// and nothing else: the runtime's DynamoDB clients (the document client with the store's options)
// and Powertools Logger and Metrics (the bundles section times that import). Its handler is the MCP
// function's first call without the gateway: the same requests to the same stand-ins, as the
// function makes them (the configuration's pointer, then its object and the signature check
// together, the system call, the record's write), the clients the first call loads loaded on first use as the function loads them
// (the first-call section times it). What it sends comes from the plan the bench writes beside it
// (floor-plan.ts).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { serviceLogger } from '../functions/commons/logger.js';
import { metricNames, metricsNamespace, metricsService } from '../shared/adapters/emf-names.js';
import { type FloorPlan, floorPlanFile, isFloorPlan } from './floor-plan.js';

const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});
const logger = serviceLogger('mcp');
const metrics = new Metrics({ namespace: metricsNamespace, serviceName: metricsService });

const environment = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`the floor needs ${name} in its environment`);
  return value;
};

const textOf = (item: Record<string, unknown> | undefined, name: string): string => {
  const value = item?.[name];
  if (typeof value !== 'string') throw new Error(`the configuration pointer has no ${name}`);
  return value;
};

/** The configuration as the gateway reads it when it has none: pointer, object, signature check. */
const readConfiguration = async (plan: FloorPlan): Promise<void> => {
  const { Item } = await documents.send(
    new GetCommand({ TableName: environment('CONFIG_TABLE'), Key: { name: 'current' }, ConsistentRead: true }),
  );
  // Loaded on first use through the gateway's own modules, as the functions load them (a module of
  // ours is required from the bundle's chunk); the object and its signature asked for together.
  const [{ S3Client, GetObjectCommand }, { KMSClient, VerifyCommand }] = await Promise.all([
    import('../shared/adapters/sdk/s3.js'),
    import('../shared/adapters/sdk/kms.js'),
  ]);
  const fetched = new S3Client({})
    .send(
      new GetObjectCommand({
        Bucket: environment('CONFIG_BUCKET'),
        Key: textOf(Item, 'object_key'),
        VersionId: textOf(Item, 'object_version'),
      }),
    )
    .then((object) => object.Body?.transformToByteArray());
  const verified = new KMSClient({}).send(
    new VerifyCommand({
      KeyId: environment('CONFIG_SIGNING_KEY_ID'),
      Message: Buffer.from(plan.signedMessage, 'base64'),
      MessageType: 'RAW',
      Signature: Buffer.from(textOf(Item, 'signature'), 'base64'),
      SigningAlgorithm: 'ECDSA_SHA_256',
    }),
  );
  const [, { SignatureValid }] = await Promise.all([fetched, verified]);
  if (SignatureValid !== true) throw new Error('the configuration signature did not verify');
};

const agent = new Agent({ keepAlive: true });

/** The system call over node's own HTTP client, kept alive as the gateway's is; the answer's text. */
const callSystem = (plan: FloorPlan): Promise<string> =>
  new Promise((resolve, reject) => {
    const sent = request(plan.systemUrl, { agent, headers: plan.systemHeaders }, (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        text += chunk;
      });
      answer.on('end', () => (answer.statusCode === 200 ? resolve(text) : reject(new Error(`system ${text}`))));
    });
    sent.on('error', reject);
    sent.end();
  });

let plan: FloorPlan | undefined;
const planOf = (): FloorPlan => {
  if (plan !== undefined) return plan;
  const read: unknown = JSON.parse(readFileSync(new URL(`./${floorPlanFile}`, import.meta.url), 'utf8'));
  if (!isFloorPlan(read)) throw new Error(`${floorPlanFile} is not the floor's plan`);
  plan = read;
  return read;
};

let configured = false;

/** One call: the configuration when none is held, the system call, the record, a metric line, the answer. */
export const handler = async (): Promise<{ statusCode: number; body: string }> => {
  const floorPlan = planOf();
  if (!configured) {
    await readConfiguration(floorPlan);
    configured = true;
  }
  const output = await callSystem(floorPlan);
  await documents.send(
    new PutCommand({
      TableName: environment('EXECUTIONS_TABLE'),
      Item: { ...floorPlan.record, execution_id: randomUUID() },
      ConditionExpression: 'attribute_not_exists(execution_id)',
    }),
  );
  metrics.addMetric(metricNames.calls, MetricUnit.Count, 1);
  metrics.publishStoredMetrics();
  logger.debug('floor call answered');
  return { statusCode: 200, body: JSON.stringify({ jsonrpc: '2.0', result: { status: 'succeeded', output } }) };
};
