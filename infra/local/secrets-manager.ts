// A Secrets Manager stand-in on loopback: the calls the gateway and its tools make (read a secret,
// and create or change one to set it up), over the service's own JSON protocol and signed with the
// run's credential, so the deployed code path (Powertools Parameters, the SDK client) runs here
// unchanged. Secrets live in memory; every call is recorded with the secret it named.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type LocalAwsCredentials, newLocalAwsCredentials, requireSignedRequests } from './aws-signature.js';
import { listen } from './net.js';

export interface SecretsManagerCall {
  /** The action, as IAM names it (`secretsmanager:GetSecretValue`). */
  readonly action: string;
  /** The secret's name as asked for. */
  readonly secretId: string;
}

export interface LocalSecretsManager {
  readonly endpoint: string;
  readonly credentials: LocalAwsCredentials;
  /** Sets a secret's text, as an operator would with the console or the CLI. */
  put(name: string, text: string): void;
  readonly calls: readonly SecretsManagerCall[];
  close(): Promise<void>;
}

const target = 'secretsmanager.';
const json = 'application/x-amz-json-1.1';

const answer = (response: ServerResponse, status: number, body: unknown): void => {
  response.writeHead(status, { 'content-type': json }).end(JSON.stringify(body));
};

const refuse = (response: ServerResponse, type: string, message: string): void => {
  response.writeHead(400, { 'content-type': json, 'x-amzn-errortype': type });
  response.end(JSON.stringify({ __type: type, message }));
};

/** The request's JSON body; the signature check hands it over as 'data' and 'end' events. */
const readBody = (request: IncomingMessage): Promise<Record<string, unknown>> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        resolve(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : {});
      } catch {
        resolve({});
      }
    });
  });

export const startLocalSecretsManager = async (
  options: { credentials?: LocalAwsCredentials } = {},
): Promise<LocalSecretsManager> => {
  const secrets = new Map<string, { text: string; version: number }>();
  const calls: SecretsManagerCall[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const action = String(request.headers['x-amz-target'] ?? '');
      const body = await readBody(request);
      const secretId =
        typeof body.SecretId === 'string' ? body.SecretId : typeof body.Name === 'string' ? body.Name : '';
      if (!action.startsWith(target) || secretId.length === 0) {
        refuse(response, 'InvalidRequestException', 'Expected a Secrets Manager action naming a secret.');
        return;
      }
      const name = action.slice(target.length);
      calls.push({ action: `secretsmanager:${name}`, secretId });
      const secret = secrets.get(secretId);
      const text = typeof body.SecretString === 'string' ? body.SecretString : null;
      switch (name) {
        case 'GetSecretValue':
          if (secret === undefined)
            refuse(response, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
          else
            answer(response, 200, {
              ARN: `arn:aws:secretsmanager:local:000000000000:secret:${secretId}`,
              Name: secretId,
              SecretString: secret.text,
              VersionId: `v${secret.version}`,
              VersionStages: ['AWSCURRENT'],
            });
          return;
        case 'DescribeSecret':
          if (secret === undefined)
            refuse(response, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
          else answer(response, 200, { Name: secretId });
          return;
        case 'CreateSecret':
        case 'PutSecretValue':
          if (text === null) refuse(response, 'InvalidParameterException', 'Expected SecretString.');
          else if (name === 'CreateSecret' && secret !== undefined)
            refuse(response, 'ResourceExistsException', 'The secret already exists.');
          else if (name === 'PutSecretValue' && secret === undefined)
            refuse(response, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
          else {
            secrets.set(secretId, { text, version: (secret?.version ?? 0) + 1 });
            answer(response, 200, { Name: secretId, VersionId: `v${(secret?.version ?? 0) + 1}` });
          }
          return;
        default:
          refuse(response, 'InvalidActionException', `${name} is not served here.`);
      }
    })().catch(() => response.destroy());
  });
  const credentials = options.credentials ?? newLocalAwsCredentials();
  requireSignedRequests(server, credentials, 1024 * 1024);
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    credentials,
    put: (name, text) => {
      const version = (secrets.get(name)?.version ?? 0) + 1;
      secrets.set(name, { text, version });
    },
    calls,
    close: () => listening.close(),
  };
};
