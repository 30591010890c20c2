// Reading the local runtime's options from flags and the environment: defaults, each flag, each variable, and the
// refusals.
//
// Long: the whole options object is compared in each case, so every new option adds its line to each.
import { describe, expect, it } from 'vitest';
import { type LocalOptions, parseLocalOptions } from '../../../infra/local/options.js';
import { verifies } from '../../support/requirements.js';

type Environment = Readonly<Record<string, string | undefined>>;

const options = (argv: readonly string[], environment: Environment = {}): LocalOptions => {
  const parsed = parseLocalOptions(argv, environment);
  if (parsed.kind !== 'run') throw new Error(`expected options, got ${JSON.stringify(parsed)}`);
  return parsed.options;
};

const error = (argv: readonly string[], environment: Environment = {}): string => {
  const parsed = parseLocalOptions(argv, environment);
  if (parsed.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(parsed)}`);
  return parsed.message;
};

describe('parseLocalOptions: defaults', () => {
  it('gives the documented defaults with no flags and no environment', () => {
    expect(parseLocalOptions([], {})).toEqual({
      kind: 'run',
      options: {
        host: '127.0.0.1',
        port: 8787,
        dynamodbPort: 0,
        stepFunctionsPort: 0,
        dataDir: '.gateway-data',
        memory: false,
        awsConfigFile: null,
        config: 'examples/gateway.config.yaml',
        anonymousAgent: null,
        demoErp: true,
        erpPort: 8788,
        demoTools: true,
        demoToolsPort: 8790,
        demoMcp: true,
        demoMcpPort: 8791,
        grpcPort: 8789,
        channelParamsWaitMs: 10_000,
        crashAt: null,
        logLevel: 'info',
      },
    });
  });

  it('ignores unrelated environment variables and treats empty GATEWAY_* values as unset', () => {
    expect(
      options([], {
        PORT: '1234',
        HOST: '0.0.0.0',
        GATEWAY_PORT: '',
        GATEWAY_HOST: '',
        GATEWAY_DATA_DIR: '',
        GATEWAY_CONFIG: '',
        GATEWAY_ANONYMOUS_AGENT: '',
      }),
    ).toEqual(options([], {}));
  });
});

describe('parseLocalOptions: the anonymous agent', () => {
  it(verifies('auth.anonymous-local-only', 'is off (null) by default'), () => {
    expect(options([]).anonymousAgent).toBeNull();
    expect(options(['--host', '0.0.0.0']).anonymousAgent).toBeNull();
  });

  it(verifies('auth.anonymous-local-only', 'is accepted with the default host 127.0.0.1'), () => {
    const parsed = options(['--anonymous-agent', 'conformance-agent']);
    expect(parsed.host).toBe('127.0.0.1');
    expect(parsed.anonymousAgent).toBe('conformance-agent');
  });

  it.each(['localhost', '::1', '127.0.0.1', '127.0.0.2'])(
    verifies('auth.anonymous-local-only', 'is accepted with the loopback host %s'),
    (host) => {
      const parsed = options(['--host', host, '--anonymous-agent', 'conformance-agent']);
      expect(parsed.host).toBe(host);
      expect(parsed.anonymousAgent).toBe('conformance-agent');
    },
  );

  it(verifies('auth.anonymous-local-only', 'is accepted from GATEWAY_ANONYMOUS_AGENT on loopback'), () => {
    const parsed = options([], { GATEWAY_ANONYMOUS_AGENT: 'conformance-agent', GATEWAY_HOST: 'localhost' });
    expect(parsed.anonymousAgent).toBe('conformance-agent');
    expect(parsed.host).toBe('localhost');
  });

  const nonLoopback = ['0.0.0.0', '192.168.1.20', '10.0.0.5', '::', 'gateway.example.com'];

  it.each(nonLoopback)(
    verifies('auth.anonymous-local-only', 'is refused as a flag with --host %s, naming the host'),
    (host) => {
      const message = error(['--host', host, '--anonymous-agent', 'conformance-agent']);
      expect(message).toContain('--anonymous-agent');
      expect(message).toContain(`binding to ${host}`);
    },
  );

  it.each(nonLoopback)(
    verifies('auth.anonymous-local-only', 'is refused from GATEWAY_ANONYMOUS_AGENT with --host %s, naming the host'),
    (host) => {
      const message = error(['--host', host], { GATEWAY_ANONYMOUS_AGENT: 'conformance-agent' });
      expect(message).toContain('--anonymous-agent');
      expect(message).toContain(`binding to ${host}`);
    },
  );

  it(verifies('auth.anonymous-local-only', 'is refused when the host comes from GATEWAY_HOST'), () => {
    const message = error(['--anonymous-agent', 'conformance-agent'], { GATEWAY_HOST: '0.0.0.0' });
    expect(message).toContain('binding to 0.0.0.0');
  });

  it(verifies('auth.anonymous-local-only', 'is refused when a flag host overrides a loopback GATEWAY_HOST'), () => {
    const message = error(['--host', '192.168.1.20'], {
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_ANONYMOUS_AGENT: 'conformance-agent',
    });
    expect(message).toContain('binding to 192.168.1.20');
  });
});

describe('parseLocalOptions: ports', () => {
  it.each(['70000', '65536', 'abc', '1.5'])(
    verifies('config.clear-errors', 'refuses --port %s naming port'),
    (port) => {
      expect(error(['--port', port])).toMatch(/^port: /);
    },
  );

  it(verifies('config.clear-errors', 'refuses a negative --port naming port'), () => {
    expect(error(['--port=-1'])).toMatch(/^port: /);
  });

  it(verifies('config.clear-errors', 'refuses a bad GATEWAY_PORT naming port'), () => {
    expect(error([], { GATEWAY_PORT: 'eighty' })).toMatch(/^port: /);
  });

  it(verifies('config.clear-errors', 'refuses a bad --dynamodb-port naming dynamodbPort'), () => {
    expect(error(['--dynamodb-port', '99999'])).toMatch(/^dynamodbPort: /);
  });

  it.each([
    ['--port ""', ['--port', ''], {}],
    ['GATEWAY_PORT="  "', [], { GATEWAY_PORT: '  ' }],
  ])(
    verifies('config.clear-errors', 'refuses a blank port (%s) instead of reading it as 0'),
    (_label, argv, environment) => {
      expect(error(argv, environment)).toMatch(/^port: /);
    },
  );

  it('accepts the edges 0 and 65535', () => {
    expect(options(['--port', '0']).port).toBe(0);
    expect(options(['--port', '65535']).port).toBe(65_535);
  });
});

describe('parseLocalOptions: flags and environment', () => {
  it('takes every option from GATEWAY_* variables when no flag is given', () => {
    expect(
      options([], {
        GATEWAY_HOST: 'localhost',
        GATEWAY_PORT: '9100',
        GATEWAY_DYNAMODB_PORT: '8000',
        GATEWAY_SFN_PORT: '8001',
        GATEWAY_DATA_DIR: '/var/lib/gateway',
        GATEWAY_MEMORY: '1',
        GATEWAY_AWS_CONFIG_FILE: '/run/gateway/aws-config',
        GATEWAY_CONFIG: 'conf/gateway.yaml',
        GATEWAY_ERP_PORT: '9200',
        GATEWAY_GRPC_PORT: '9201',
        GATEWAY_DEMO_ERP: '0',
        GATEWAY_CHANNEL_PARAMS_WAIT_MS: '250',
        GATEWAY_DEMO_TOOLS: '0',
        GATEWAY_DEMO_TOOLS_PORT: '9202',
        GATEWAY_DEMO_MCP: '0',
        GATEWAY_DEMO_MCP_PORT: '9202',
        GATEWAY_LOG_LEVEL: 'WARN',
      }),
    ).toEqual({
      host: 'localhost',
      port: 9100,
      dynamodbPort: 8000,
      stepFunctionsPort: 8001,
      dataDir: '/var/lib/gateway',
      memory: true,
      awsConfigFile: '/run/gateway/aws-config',
      config: 'conf/gateway.yaml',
      anonymousAgent: null,
      demoErp: false,
      erpPort: 9200,
      demoTools: false,
      demoToolsPort: 9202,
      demoMcp: false,
      demoMcpPort: 9202,
      grpcPort: 9201,
      channelParamsWaitMs: 250,
      crashAt: null,
      logLevel: 'warn',
    });
  });

  it('lets each flag win over its variable', () => {
    expect(
      options(
        [
          '--host',
          '::1',
          '--port',
          '9000',
          '--dynamodb-port',
          '9001',
          '--sfn-port',
          '9002',
          '--data-dir',
          'flag-data',
          '--aws-config-file',
          'flag-aws-config',
          '--config',
          'flag.yaml',
          '--anonymous-agent',
          'flag-agent',
          '--erp-port',
          '0',
          '--grpc-port',
          '0',
          '--no-demo-erp',
          '--demo-mcp-port',
          '0',
          '--no-demo-mcp',
          '--log-level',
          'error',
        ],
        {
          GATEWAY_HOST: 'localhost',
          GATEWAY_PORT: '9100',
          GATEWAY_DYNAMODB_PORT: '9101',
          GATEWAY_SFN_PORT: '9102',
          GATEWAY_DATA_DIR: 'env-data',
          GATEWAY_AWS_CONFIG_FILE: 'env-aws-config',
          GATEWAY_CONFIG: 'env.yaml',
          GATEWAY_ANONYMOUS_AGENT: 'env-agent',
          GATEWAY_ERP_PORT: '9300',
          GATEWAY_GRPC_PORT: '9301',
          GATEWAY_DEMO_MCP_PORT: '9302',
          GATEWAY_DEMO_MCP: '1',
          GATEWAY_LOG_LEVEL: 'debug',
        },
      ),
    ).toEqual({
      host: '::1',
      port: 9000,
      dynamodbPort: 9001,
      stepFunctionsPort: 9002,
      dataDir: 'flag-data',
      memory: false,
      awsConfigFile: 'flag-aws-config',
      config: 'flag.yaml',
      anonymousAgent: 'flag-agent',
      demoErp: false,
      erpPort: 0,
      demoTools: true,
      demoToolsPort: 8790,
      demoMcp: false,
      demoMcpPort: 0,
      grpcPort: 0,
      channelParamsWaitMs: 10_000,
      crashAt: null,
      logLevel: 'error',
    });
  });

  it('reads GATEWAY_PORT as a number', () => {
    expect(options([], { GATEWAY_PORT: '9100' }).port).toBe(9100);
  });

  it('reads GATEWAY_DATA_DIR', () => {
    expect(options([], { GATEWAY_DATA_DIR: '/tmp/gateway-data' }).dataDir).toBe('/tmp/gateway-data');
  });

  it.each([
    ['1', true],
    ['true', true],
    ['0', false],
    ['false', false],
    ['', false],
    ['yes', false],
  ])('reads GATEWAY_MEMORY=%s as %s', (value, memory) => {
    expect(options([], { GATEWAY_MEMORY: value }).memory).toBe(memory);
  });

  it('turns memory on with --memory', () => {
    expect(options(['--memory']).memory).toBe(true);
    expect(options(['--memory'], { GATEWAY_MEMORY: '0' }).memory).toBe(true);
  });
});

describe('parseLocalOptions: help and bad flags', () => {
  it('answers help for --help', () => {
    expect(parseLocalOptions(['--help'], {})).toEqual({ kind: 'help' });
  });

  it('answers help for --help even beside values that would be refused', () => {
    expect(parseLocalOptions(['--port', 'abc', '--help'], {})).toEqual({ kind: 'help' });
  });

  it('refuses an unknown flag, naming it', () => {
    expect(error(['--frobnicate'])).toContain('--frobnicate');
  });

  it('refuses a positional argument, naming it', () => {
    expect(error(['serve'])).toContain("'serve'");
  });

  it('refuses a flag that needs a value when it has none, naming it', () => {
    expect(error(['--port'])).toContain('--port');
  });

  it('refuses a log level it does not know, naming logLevel and the levels', () => {
    expect(error(['--log-level', 'verbose'])).toBe('logLevel: expected debug, info, warn, error or silent');
  });

  it('refuses an empty --anonymous-agent naming anonymousAgent', () => {
    expect(error(['--anonymous-agent', ''])).toMatch(/^anonymousAgent: /);
  });
});
