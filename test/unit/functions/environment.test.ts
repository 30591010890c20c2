import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseEnvironment } from '../../../functions/commons/environment.js';
import { parseGrpcEnvironment } from '../../../functions/commons/token-environments.js';
import { verifies } from '../../support/requirements.js';

type Environment = Readonly<Record<string, string | undefined>>;

const failure = (environment: Environment): string => {
  try {
    parseEnvironment(environment);
  } catch (error) {
    if (error instanceof Error) return error.message;
    throw new Error(`expected an Error, got ${String(error)}`);
  }
  throw new Error('expected the environment to be refused');
};

describe('parseEnvironment', () => {
  it(verifies('functions.environment', 'fills the defaults around EXECUTIONS_TABLE'), () => {
    expect(
      parseEnvironment({
        EXECUTIONS_TABLE: 'gateway-executions',
        CONFIG_TABLE: 'gateway-config',
        CONFIG_BUCKET: 'config-bundles',
        CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
        DATA_KEY_ID: 'alias/gateway',
      }),
    ).toEqual({
      EXECUTIONS_TABLE: 'gateway-executions',
      CONFIG_TABLE: 'gateway-config',
      CONFIG_BUCKET: 'config-bundles',
      CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
      DATA_KEY_ID: 'alias/gateway',
      CONFIG_REFRESH_SECONDS: 30,
      SECRETS_MAX_AGE_SECONDS: 300,
      ALLOWED_HOSTS: [],
      ALLOWED_ORIGINS: [],
      AUTHORIZATION_SERVERS: [],
    });
  });

  it(verifies('functions.environment', 'fails naming EXECUTIONS_TABLE when it is missing'), () => {
    const message = failure({ PUBLIC_URL: 'https://gateway.example.com' });
    expect(message).toMatch(/^The function's environment is invalid: EXECUTIONS_TABLE: /);
    expect(message).not.toContain('PUBLIC_URL');
  });

  it(verifies('functions.environment', 'fails naming EXECUTIONS_TABLE when it is empty'), () => {
    expect(failure({ EXECUTIONS_TABLE: '' })).toMatch(/^The function's environment is invalid: EXECUTIONS_TABLE: /);
  });

  it(verifies('functions.environment', 'fails naming PUBLIC_URL when it is not a URL'), () => {
    const message = failure({ EXECUTIONS_TABLE: 'gateway-executions', PUBLIC_URL: 'gateway.example.com/mcp' });
    expect(message).toMatch(/^The function's environment is invalid: PUBLIC_URL: /);
    expect(message).not.toContain('EXECUTIONS_TABLE');
  });

  it(verifies('functions.environment', 'names every invalid variable at once'), () => {
    const message = failure({ PUBLIC_URL: 'not a url', CONFIG_REFRESH_SECONDS: '0' });
    expect(message).toContain('EXECUTIONS_TABLE: ');
    expect(message).toContain('PUBLIC_URL: ');
    expect(message).toContain('CONFIG_REFRESH_SECONDS: ');
  });

  it(verifies('functions.environment', 'keeps a valid PUBLIC_URL'), () => {
    const environment = parseEnvironment({
      EXECUTIONS_TABLE: 'gateway-executions',
      CONFIG_TABLE: 'gateway-config',
      CONFIG_BUCKET: 'config-bundles',
      CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
      DATA_KEY_ID: 'alias/gateway',
      PUBLIC_URL: 'https://gateway.example.com',
    });
    expect(environment.PUBLIC_URL).toBe('https://gateway.example.com');
  });

  it(verifies('functions.environment', 'splits comma lists, trimming entries and dropping empty ones'), () => {
    const environment = parseEnvironment({
      EXECUTIONS_TABLE: 'gateway-executions',
      CONFIG_TABLE: 'gateway-config',
      CONFIG_BUCKET: 'config-bundles',
      CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
      DATA_KEY_ID: 'alias/gateway',
      ALLOWED_ORIGINS: ' a.example.com, b.example.com ,',
      ALLOWED_HOSTS: 'gateway.example.com',
      AUTHORIZATION_SERVERS: ',,https://auth.example.com ,  ,https://login.example.com',
    });
    expect(environment.ALLOWED_ORIGINS).toEqual(['a.example.com', 'b.example.com']);
    expect(environment.ALLOWED_HOSTS).toEqual(['gateway.example.com']);
    expect(environment.AUTHORIZATION_SERVERS).toEqual(['https://auth.example.com', 'https://login.example.com']);
  });

  it(verifies('functions.environment', 'reads an empty list as no entries'), () => {
    expect(
      parseEnvironment({
        EXECUTIONS_TABLE: 't',
        CONFIG_TABLE: 'c',
        CONFIG_BUCKET: 'b',
        CONFIG_SIGNING_KEY_ID: 'k',
        DATA_KEY_ID: 'k',
        ALLOWED_HOSTS: '',
      }).ALLOWED_HOSTS,
    ).toEqual([]);
    expect(
      parseEnvironment({
        EXECUTIONS_TABLE: 't',
        CONFIG_TABLE: 'c',
        CONFIG_BUCKET: 'b',
        CONFIG_SIGNING_KEY_ID: 'k',
        DATA_KEY_ID: 'k',
        ALLOWED_HOSTS: ' , ',
      }).ALLOWED_HOSTS,
    ).toEqual([]);
  });
});

describe('processEnvironment', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it(verifies('functions.environment', 'parses the process environment once and keeps the answer'), async () => {
    vi.resetModules();
    vi.stubEnv('EXECUTIONS_TABLE', 'first-table');
    vi.stubEnv('CONFIG_TABLE', 'config-table');
    vi.stubEnv('CONFIG_BUCKET', 'config-bundles');
    vi.stubEnv('CONFIG_SIGNING_KEY_ID', 'arn:aws:kms:eu-west-1:111111111111:key/config-signing');
    vi.stubEnv('DATA_KEY_ID', 'alias/gateway');
    const { processEnvironment } = await import('../../../functions/commons/environment.js');
    const first = processEnvironment();
    expect(first.EXECUTIONS_TABLE).toBe('first-table');
    vi.stubEnv('EXECUTIONS_TABLE', 'second-table');
    expect(processEnvironment()).toBe(first);
    expect(processEnvironment().EXECUTIONS_TABLE).toBe('first-table');
  });
});

describe('parseGrpcEnvironment', () => {
  const container = {
    EXECUTIONS_TABLE: 'gateway-executions',
    CONFIG_TABLE: 'gateway-config',
    CONFIG_BUCKET: 'config-bundles',
    CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
    DATA_KEY_ID: 'alias/gateway',
    STATE_MACHINE_ARN: 'arn:aws:states:eu-west-1:123456789012:stateMachine:approvals',
    AGENT_CLAIM: 'client_id',
    AGENT_JWT_ISSUER: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc',
    AGENT_JWT_AUDIENCE: 'client-a, client-b',
    AGENT_JWT_SCOPES: 'approval-gateway/invoke',
  };

  it(verifies('functions.environment', "reads the MCP function's variables and the token settings"), () => {
    expect(parseGrpcEnvironment(container)).toMatchObject({
      EXECUTIONS_TABLE: 'gateway-executions',
      AGENT_CLAIM: 'client_id',
      GRPC_PORT: 50051,
      AGENT_JWT_AUDIENCE: ['client-a', 'client-b'],
      AGENT_JWT_SCOPES: ['approval-gateway/invoke'],
    });
    expect(parseGrpcEnvironment(container).AGENT_JWKS_URI).toBeUndefined();
    // Unlisted agents' groups and customer are read from no claim unless one is named.
    expect(parseGrpcEnvironment(container)).toMatchObject({ GROUPS_CLAIM: '', CUSTOMER_CLAIM: '' });
    // The stack's Cognito pool: no audience, the agent scope required.
    expect(parseGrpcEnvironment({ ...container, AGENT_JWT_AUDIENCE: '' }).AGENT_JWT_AUDIENCE).toEqual([]);
    expect(parseGrpcEnvironment({ ...container, GRPC_PORT: '6000', AGENT_JWT_SCOPES: '' })).toMatchObject({
      GRPC_PORT: 6000,
      AGENT_JWT_SCOPES: [],
    });
  });

  it(verifies('functions.environment', 'fails naming the token settings when they are missing or empty'), () => {
    const { AGENT_JWT_ISSUER: _issuer, ...withoutIssuer } = container;
    expect(() => parseGrpcEnvironment(withoutIssuer)).toThrow(/AGENT_JWT_ISSUER/);
    expect(() => parseGrpcEnvironment({ ...container, AGENT_JWT_AUDIENCE: ' , ', AGENT_JWT_SCOPES: '' })).toThrow(
      /AGENT_JWT_AUDIENCE: give an audience \(AGENT_JWT_AUDIENCE\) or a required scope/,
    );
    expect(() => parseGrpcEnvironment({ ...container, GRPC_PORT: '70000' })).toThrow(/GRPC_PORT/);
    expect(() => parseGrpcEnvironment({ ...container, AGENT_JWKS_URI: 'keys' })).toThrow(/AGENT_JWKS_URI/);
  });
});
