// The demo configuration pushed to local stand-ins of a stack's table, bundles bucket and signing
// key the way `npm run config:push` pushes it to AWS: the script itself runs, so the bundle is
// whatever it writes. A deployed configuration names no `${env:…}`, so the demo's addresses are
// written into a copy of it first.
import { spawn } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReferenceMcpServer } from '../examples/reference-mcp/server.js';
import { localAwsProfile, writeLocalAwsConfig } from '../infra/local/aws-config-file.js';
import type { LocalDynamoDb } from '../infra/local/dynamodb.js';
import { startLocalKms } from '../infra/local/kms.js';
import { startLocalS3 } from '../infra/local/s3.js';
import { projectPath } from '../infra/paths.js';

/** Where the functions find the pushed bundle: the bucket and signing key stand-ins, until closed. */
export interface PushedConfiguration {
  readonly output: string;
  readonly bucket: string;
  readonly signingKeyArn: string;
  readonly s3Endpoint: string;
  readonly kmsEndpoint: string;
  close(): Promise<void>;
}

/** Where nothing listens: the push's Step Functions endpoint (it never uses one). */
const closedPort = 'http://127.0.0.1:9';

/** A copy of the demo configuration in `folder` with the demo's addresses written in; its path. */
const demoConfigurationWith = async (folder: string, written: Readonly<Record<string, string>>): Promise<string> => {
  await cp(projectPath('examples'), join(folder, 'examples'), { recursive: true });
  const file = join(folder, 'examples', 'gateway.config.yaml');
  const text = (await readFile(file, 'utf8')).replace(
    /\$\{env:(DEMO_[A-Z_]+)\}/g,
    (reference, name: string) => written[name] ?? reference,
  );
  await writeFile(file, text);
  return file;
};

/** `npm run config:push` as a process, with the environment's own AWS keys left out; its output. */
const runConfigPush = (args: readonly string[], folder: string, awsConfig: string): Promise<string> => {
  const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, AWS_SESSION_TOKEN: _token, ...rest } = process.env;
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', projectPath('scripts/config-push.ts'), ...args], {
      cwd: projectPath(),
      env: {
        ...rest,
        AWS_CONFIG_FILE: awsConfig,
        AWS_SHARED_CREDENTIALS_FILE: join(folder, 'no-credentials'),
        AWS_PROFILE: localAwsProfile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let collected = '';
    const collect = (chunk: Buffer) => {
      collected += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(collected.trim());
      else reject(new Error(`config:push failed (${code}): ${collected.slice(-800)}`));
    });
  });
};

/**
 * Runs `npm run config:push` for the demo configuration against a local store, bucket and signing
 * key, as an operator would: the store's credential from an AWS config file, the demo MCP server
 * running so its tools are listed into the bundle, the demo's addresses (`urls`) written in.
 */
export const pushDemoConfiguration = async (
  store: LocalDynamoDb,
  table: string,
  folder: string,
  urls: Readonly<Record<'DEMO_ERP_URL' | 'DEMO_CALL_TOOL_URL', string>>,
): Promise<PushedConfiguration> => {
  const awsConfig = join(folder, 'aws-config');
  await writeLocalAwsConfig(awsConfig, {
    credentials: store.credentials,
    dynamodbEndpoint: store.endpoint,
    stepFunctionsEndpoint: closedPort,
  });
  const bucket = 'config-bundles';
  const s3 = await startLocalS3({ credentials: store.credentials, buckets: [bucket] });
  const kms = await startLocalKms({ credentials: store.credentials });
  const signingKeyArn = kms.createSigningKey();
  const close = async () => {
    await s3.close();
    await kms.close();
  };
  // The push lists the demo MCP server's tools into the bundle: it must be running.
  const reference = await startReferenceMcpServer({ port: 0 });
  try {
    const file = await demoConfigurationWith(folder, { ...urls, DEMO_MCP_URL: reference.url });
    const args = [
      ...['--table', table, '--bucket', bucket, '--key', signingKeyArn, '--endpoint', store.endpoint],
      ...['--s3-endpoint', s3.endpoint, '--kms-endpoint', kms.endpoint, file],
    ];
    const output = await runConfigPush(args, folder, awsConfig);
    return { output, bucket, signingKeyArn, s3Endpoint: s3.endpoint, kmsEndpoint: kms.endpoint, close };
  } catch (error) {
    await close();
    throw error;
  } finally {
    await reference.close();
  }
};
