// The demo configuration pushed to a local store's config table the way `npm run config:push`
// pushes it to AWS: the script itself runs, so the bundle is whatever it writes.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startReferenceMcpServer } from '../examples/reference-mcp/server.js';
import { localAwsProfile, writeLocalAwsConfig } from '../infra/local/aws-config-file.js';
import type { LocalDynamoDb } from '../infra/local/dynamodb.js';
import { projectPath } from '../infra/paths.js';

/** Where nothing listens: the push's Step Functions endpoint (it never uses one). */
const closedPort = 'http://127.0.0.1:9';

/**
 * Runs `npm run config:push` for the demo configuration against a local store, as an operator
 * would: the store's credential from an AWS config file, the demo MCP server running so its tools
 * are listed into the bundle. Answers what the push printed.
 */
export const pushDemoConfiguration = async (store: LocalDynamoDb, table: string, folder: string): Promise<string> => {
  const awsConfig = join(folder, 'aws-config');
  await writeLocalAwsConfig(awsConfig, {
    credentials: store.credentials,
    dynamodbEndpoint: store.endpoint,
    stepFunctionsEndpoint: closedPort,
  });
  // The push lists the demo MCP server's tools into the bundle: it must be running.
  const reference = await startReferenceMcpServer({ port: 0 });
  try {
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, AWS_SESSION_TOKEN: _token, ...rest } = process.env;
    const args = [
      '--import',
      'tsx',
      projectPath('scripts/config-push.ts'),
      '--table',
      table,
      '--endpoint',
      store.endpoint,
      'examples/gateway.config.yaml',
    ];
    return await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, args, {
        cwd: projectPath(),
        env: {
          ...rest,
          AWS_CONFIG_FILE: awsConfig,
          AWS_SHARED_CREDENTIALS_FILE: join(folder, 'no-credentials'),
          AWS_PROFILE: localAwsProfile,
          DEMO_MCP_URL: reference.url,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const collect = (chunk: Buffer) => {
        output += chunk.toString('utf8');
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(output.trim());
        else reject(new Error(`config:push failed (${code}): ${output.slice(-800)}`));
      });
    });
  } finally {
    await reference.close();
  }
};
