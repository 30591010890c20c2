// Where the runtime leaves its per-run credential for tools and tests: an AWS config file (owner
// only) with one profile naming the credential and the local endpoints, so the AWS CLI and SDKs
// reach the store with `AWS_CONFIG_FILE=<file> AWS_PROFILE=approval-gateway-local`.
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { LocalAwsCredentials } from './aws-signature.js';

export const localAwsProfile = 'approval-gateway-local';

export interface LocalAwsConfig {
  readonly credentials: LocalAwsCredentials;
  readonly dynamodbEndpoint: string;
  readonly stepFunctionsEndpoint: string;
}

/** Writes the file afresh (a new file, readable by its owner only). */
export const writeLocalAwsConfig = async (path: string, config: LocalAwsConfig): Promise<void> => {
  const text = [
    `# The local Approval Gateway's store and Step Functions endpoints, valid while that process runs.`,
    `[profile ${localAwsProfile}]`,
    'region = local',
    `aws_access_key_id = ${config.credentials.accessKeyId}`,
    `aws_secret_access_key = ${config.credentials.secretAccessKey}`,
    `services = ${localAwsProfile}`,
    '',
    `[services ${localAwsProfile}]`,
    'dynamodb =',
    `  endpoint_url = ${config.dynamodbEndpoint}`,
    'sfn =',
    `  endpoint_url = ${config.stepFunctionsEndpoint}`,
    '',
  ].join('\n');
  // A file left by an earlier run may have been made with other permissions: it is replaced.
  await rm(path, { force: true });
  await writeFile(path, text, { mode: 0o600, flag: 'wx' });
};

/** Reads what `writeLocalAwsConfig` wrote. */
export const readLocalAwsConfig = async (path: string): Promise<LocalAwsConfig> => {
  const text = await readFile(path, 'utf8');
  const value = (pattern: RegExp): string => {
    const found = pattern.exec(text)?.[1];
    if (found === undefined) throw new Error(`${path} does not name ${pattern.source}.`);
    return found;
  };
  return {
    credentials: {
      accessKeyId: value(/^aws_access_key_id = (\S+)$/m),
      secretAccessKey: value(/^aws_secret_access_key = (\S+)$/m),
    },
    dynamodbEndpoint: value(/^dynamodb =\n {2}endpoint_url = (\S+)$/m),
    stepFunctionsEndpoint: value(/^sfn =\n {2}endpoint_url = (\S+)$/m),
  };
};
