// A Secrets Manager stand-in on loopback: the calls the gateway and its tools make (read a secret,
// and create or change one to set it up), over the service's own JSON protocol and signed with the
// run's credential, so the deployed code path (Powertools Parameters, the SDK client) runs here
// unchanged. Secrets live in memory; every call is recorded with the secret it named.
import { createServer } from 'node:http';
import { AwsJsonError, awsJsonHandler, type LocalAwsCredentials, newLocalAwsCredentials } from './aws-signature.js';
import { listen } from './net.js';

interface SecretsManagerCall {
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

const notFound = () =>
  new AwsJsonError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");

/** The secret a request names (SecretId, or Name on CreateSecret) and its SecretString, if any. */
const requestOf = (body: unknown): { secretId: string; text: string | null } => {
  const field = (name: string): unknown =>
    typeof body === 'object' && body !== null && Object.hasOwn(body, name) ? Reflect.get(body, name) : undefined;
  const id = field('SecretId') ?? field('Name');
  if (typeof id !== 'string' || id.length === 0)
    throw new AwsJsonError('InvalidRequestException', 'Expected a request naming a secret.');
  const text = field('SecretString');
  return { secretId: id, text: typeof text === 'string' ? text : null };
};

export const startLocalSecretsManager = async (
  options: { credentials?: LocalAwsCredentials } = {},
): Promise<LocalSecretsManager> => {
  const secrets = new Map<string, { text: string; version: number }>();
  const calls: SecretsManagerCall[] = [];
  /** An action on one secret, recorded with the secret it named. */
  const action =
    (name: string, run: (request: ReturnType<typeof requestOf>) => unknown) =>
    (body: unknown): unknown => {
      const request = requestOf(body);
      calls.push({ action: `secretsmanager:${name}`, secretId: request.secretId });
      return run(request);
    };
  const store = (secretId: string, text: string | null) => {
    if (text === null) throw new AwsJsonError('InvalidParameterException', 'Expected SecretString.');
    const version = (secrets.get(secretId)?.version ?? 0) + 1;
    secrets.set(secretId, { text, version });
    return { Name: secretId, VersionId: `v${version}` };
  };
  const actions = {
    GetSecretValue: action('GetSecretValue', ({ secretId }) => {
      const secret = secrets.get(secretId);
      if (secret === undefined) throw notFound();
      return {
        ARN: `arn:aws:secretsmanager:local:000000000000:secret:${secretId}`,
        Name: secretId,
        SecretString: secret.text,
        VersionId: `v${secret.version}`,
        VersionStages: ['AWSCURRENT'],
      };
    }),
    DescribeSecret: action('DescribeSecret', ({ secretId }) => {
      if (!secrets.has(secretId)) throw notFound();
      return { Name: secretId };
    }),
    CreateSecret: action('CreateSecret', ({ secretId, text }) => {
      if (secrets.has(secretId)) throw new AwsJsonError('ResourceExistsException', 'The secret already exists.');
      return store(secretId, text);
    }),
    PutSecretValue: action('PutSecretValue', ({ secretId, text }) => {
      if (!secrets.has(secretId)) throw notFound();
      return store(secretId, text);
    }),
  };
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const server = createServer(
    awsJsonHandler({
      credentials,
      targetPrefix: 'secretsmanager.',
      contentType: 'application/x-amz-json-1.1',
      name: 'Secrets Manager',
      actions,
    }),
  );
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    credentials,
    put: (name, text) => void store(name, text),
    calls,
    close: () => listening.close(),
  };
};
