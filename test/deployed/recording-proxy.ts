// A recording step in front of the AWS stand-ins. Each function signs its calls with its own
// access key (as each Lambda function has its own role's session); the step checks that
// signature, notes which function called which action on which resource (as IAM would evaluate
// it: the table or index, the state machine, the key, the secret, the object, the bus), then
// signs the request again with the stand-ins' credential and passes it on unchanged.
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { isSignedBy, type LocalAwsCredentials, refuseUnsigned, Sha256 } from '../../infra/local/aws-signature.js';
import { type Listening, listen } from '../../infra/local/net.js';
import { readRequestBody } from '../../infra/local/request-body.js';
import { account, partition, region } from './intrinsics.js';

export type Service = 'dynamodb' | 'states' | 'kms' | 's3' | 'secretsmanager' | 'events';

export interface RecordedCall {
  /** The caller: a function's logical id (or `operator`). */
  readonly caller: string;
  /** As IAM names it: `dynamodb:GetItem`. */
  readonly action: string;
  readonly resource: string;
}

const objectOf = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : {};
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const tableArn = (name: string) => `arn:${partition}:dynamodb:${region}:${account}:table/${name}`;

/** A DynamoDB request's (action, resource) pairs; a transaction is allowed item by item. */
const dynamoDbCalls = (operation: string, body: Record<string, unknown>): [string, string][] => {
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const itemActions: Record<string, string> = {
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      ConditionCheck: 'ConditionCheckItem',
      Get: 'GetItem',
    };
    return (Array.isArray(body.TransactItems) ? body.TransactItems : []).flatMap((item) =>
      Object.entries(objectOf(item)).map(([kind, detail]): [string, string] => [
        `dynamodb:${itemActions[kind] ?? kind}`,
        tableArn(text(objectOf(detail).TableName)),
      ]),
    );
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.keys(objectOf(body.RequestItems)).map((name) => [`dynamodb:${operation}`, tableArn(name)]);
  }
  const table = tableArn(text(body.TableName));
  const index = text(body.IndexName);
  return [[`dynamodb:${operation}`, index === '' ? table : `${table}/index/${index}`]];
};

/** What a request asks for, as IAM evaluates it. `machineArn` is the one state machine's ARN. */
const callsOf = (service: Service, request: IncomingMessage, raw: Buffer, machineArn: string): [string, string][] => {
  const target = String(request.headers['x-amz-target'] ?? '');
  const operation = target.split('.').at(-1) ?? '';
  if (service === 's3') {
    const url = new URL(request.url ?? '/', 'http://local');
    const [, bucket = '', ...key] = url.pathname.split('/');
    const versioned = url.searchParams.has('versionId');
    const action =
      request.method === 'PUT' ? 'PutObject' : request.method === 'GET' && versioned ? 'GetObjectVersion' : 'GetObject';
    return [[`s3:${action}`, `arn:${partition}:s3:::${bucket}/${key.map(decodeURIComponent).join('/')}`]];
  }
  let body: Record<string, unknown> = {};
  try {
    body = objectOf(JSON.parse(raw.toString('utf8') || '{}'));
  } catch {
    // An unreadable body is the stand-in's to refuse; the call is still noted.
  }
  switch (service) {
    case 'dynamodb':
      return dynamoDbCalls(operation, body);
    case 'states': {
      // A task token names no machine; this stack has one.
      const resource = text(body.stateMachineArn) || text(body.executionArn) || machineArn;
      return [[`states:${operation}`, resource]];
    }
    case 'kms': {
      const keyId = text(body.KeyId);
      const keyArn = keyId.startsWith('arn:') ? keyId : `arn:${partition}:kms:${region}:${account}:key/${keyId}`;
      return [[`kms:${operation}`, keyArn]];
    }
    case 'secretsmanager':
      // Secrets Manager's ARNs end in six random characters after the name.
      return [
        [
          `secretsmanager:${operation}`,
          `arn:${partition}:secretsmanager:${region}:${account}:secret:${text(body.SecretId)}-AbCdEf`,
        ],
      ];
    case 'events':
      return (Array.isArray(body.Entries) ? body.Entries : []).map((entry) => [
        `events:${operation}`,
        `arn:${partition}:events:${region}:${account}:event-bus/${text(objectOf(entry).EventBusName) || 'default'}`,
      ]);
  }
  return [];
};

/** The caller whose own credential signed the request (its access key and signature), or null. */
export const signingCaller = async (
  callers: ReadonlyMap<string, LocalAwsCredentials>,
  request: IncomingMessage,
  body: Buffer,
): Promise<string | null> => {
  const keyId = /Credential=([A-Za-z0-9]+)\//.exec(String(request.headers.authorization ?? ''))?.[1];
  for (const [caller, credentials] of callers) {
    if (credentials.accessKeyId === keyId && (await isSignedBy(credentials, request, body))) return caller;
  }
  return null;
};

/** Headers the step signs again; the rest pass unsigned (the stand-ins check only signed ones). */
const resigned = new Set(['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256', 'host']);

export interface RecordingProxies {
  /** The endpoint each service is reached at, for the functions' AWS_ENDPOINT_URL_* variables. */
  readonly endpoints: Readonly<Record<Service, string>>;
  readonly calls: readonly RecordedCall[];
  /** Notes a call another stand-in checked (a WebSocket API's management calls). */
  record(call: RecordedCall): void;
  close(): Promise<void>;
}

export const startRecordingProxies = async (options: {
  /** The stand-in behind each service. */
  readonly upstreams: Readonly<Record<Service, string>>;
  /** The credential the stand-ins accept. */
  readonly standIn: LocalAwsCredentials;
  /** Each caller's own credential, by the caller's name. */
  readonly callers: ReadonlyMap<string, LocalAwsCredentials>;
  readonly machineArn: string;
}): Promise<RecordingProxies> => {
  const calls: RecordedCall[] = [];
  const forward = async (service: Service, request: IncomingMessage, response: ServerResponse) => {
    const body = await readRequestBody(request, 64 * 1024 * 1024);
    const caller = await signingCaller(options.callers, request, body);
    if (caller === null) {
      refuseUnsigned(response);
      return;
    }
    for (const [action, resource] of callsOf(service, request, body, options.machineArn)) {
      calls.push({ caller, action, resource });
    }
    const upstream = new URL(options.upstreams[service]);
    const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\//.exec(String(request.headers.authorization ?? ''));
    const signer = new SignatureV4({
      credentials: options.standIn,
      region: scope?.[1] ?? region,
      service: scope?.[2] ?? service,
      sha256: Sha256,
      uriEscapePath: true,
    });
    const url = new URL(request.url ?? '/', upstream);
    const query: Record<string, string> = Object.fromEntries(url.searchParams);
    const toSign: Record<string, string> = {
      host: upstream.host,
      'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'),
    };
    const passed: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || resigned.has(name)) continue;
      passed[name] = Array.isArray(value) ? value.join(',') : value;
    }
    for (const name of ['content-type', 'x-amz-target']) if (passed[name] !== undefined) toSign[name] = passed[name];
    const signed = await signer.sign({
      method: request.method ?? 'GET',
      protocol: 'http:',
      hostname: upstream.hostname,
      port: Number(upstream.port),
      path: url.pathname,
      query,
      headers: toSign,
      body,
    });
    const headers = { ...passed, ...signed.headers };
    await new Promise<void>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: request.method,
          path: `${url.pathname}${url.search}`,
          headers,
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
          answer.on('end', resolve).on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  };

  const services: Service[] = ['dynamodb', 'states', 'kms', 's3', 'secretsmanager', 'events'];
  const listening: Listening<ReturnType<typeof createServer>>[] = [];
  const endpoints: Partial<Record<Service, string>> = {};
  for (const service of services) {
    const server = createServer((request, response) => {
      forward(service, request, response).catch(() => {
        if (!response.headersSent) response.writeHead(502).end();
        else response.destroy();
      });
    });
    const bound = await listen(server, '127.0.0.1', 0);
    listening.push(bound);
    endpoints[service] = `http://127.0.0.1:${bound.port}`;
  }
  const all = (name: Service) => {
    const endpoint = endpoints[name];
    if (endpoint === undefined) throw new Error(`no endpoint for ${name}`);
    return endpoint;
  };
  return {
    endpoints: {
      dynamodb: all('dynamodb'),
      states: all('states'),
      kms: all('kms'),
      s3: all('s3'),
      secretsmanager: all('secretsmanager'),
      events: all('events'),
    },
    calls,
    record: (call) => {
      calls.push(call);
    },
    close: async () => {
      await Promise.all(listening.map((bound) => bound.close()));
    },
  };
};
