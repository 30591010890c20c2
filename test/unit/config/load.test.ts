// Loading the configuration file: every rule, and every problem with its file, path and line.
//
// Long: one case per configuration rule and per problem message, each checked with its file, path
// and line.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../shared/config/load.js';
import { type ConfigProblem, formatProblem, type ResolvedConfig } from '../../../shared/config/resolved.js';
import { verifies } from '../../support/requirements.js';

const file = 'gateway.config.yaml';
type Environment = Readonly<Record<string, string | undefined>>;

/** Joins lines into YAML text, so that a value's line is its index in the list plus one. */
const yaml = (...lines: string[]): string => `${lines.join('\n')}\n`;

const loaded = (text: string, environment: Environment = {}): ResolvedConfig => {
  const result = loadConfigText(text, file, environment);
  if (!result.ok)
    throw new Error(`expected the configuration to load:\n${result.problems.map(formatProblem).join('\n')}`);
  return result.config;
};

const refused = (text: string, environment: Environment = {}): ConfigProblem[] => {
  const result = loadConfigText(text, file, environment);
  if (result.ok) throw new Error(`expected the configuration to be refused, got ${JSON.stringify(result.config)}`);
  return result.problems;
};

const onlyProblem = (text: string, environment: Environment = {}): ConfigProblem => {
  const problems = refused(text, environment);
  expect(problems).toHaveLength(1);
  const [problem] = problems;
  if (problem === undefined) throw new Error('expected one problem');
  return problem;
};

/** A secret reference, `${env:NAME}`, as the configuration file writes it. */
const envReference = (name: string): string => `\${env:${name}}`;

const withApprovalTime = (value: string): string =>
  yaml('# gateway configuration', '', 'settings:', `  approval_time: ${value}`, '  allowed_staleness: 15m');

describe('loadConfigText: the example file', () => {
  it(
    verifies('config.secret-references', 'loads examples/gateway.config.yaml, resolving ${env:…} and keeping literals'),
    () => {
      const text = readFileSync(new URL('../../../examples/gateway.config.yaml', import.meta.url), 'utf8');
      const result = loadConfigText(text, file, {
        DEMO_ERP_URL: 'http://127.0.0.1:9999/',
        DEMO_CALL_TOOL_URL: 'http://127.0.0.1:9998',
        DEMO_MCP_URL: 'http://127.0.0.1:9998/mcp',
      });
      if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
      const config = result.config;
      expect(config.settings).toEqual({
        enabled: true,
        approval_time: 86_400_000,
        retention: 400 * 86_400_000,
        join_pending_calls: true,
        allowed_staleness: 900_000,
        notifications: { webhooks: [] },
        limits: {
          concurrent_requests: 32,
          requests_per_second: 50,
          burst: 100,
          pending_calls: 100,
          request_bytes_per_second: 1_048_576,
          request_bytes_per_day: 1_073_741_824,
          groups: {},
          agents: {},
        },
        data_key: null,
      });
      expect(config.agents).toEqual([
        {
          id: 'procurement-agent',
          token: 'demo-procurement-token',
          tokenFromEnvironment: false,
          subject: null,
          groups: ['procurement'],
          customer: null,
        },
        {
          id: 'support-agent',
          token: 'demo-support-token',
          tokenFromEnvironment: false,
          subject: null,
          groups: ['support'],
          customer: 'customer-1042',
        },
      ]);
      // The base URL comes from the environment, without its trailing slash.
      expect(config.systems[0]).toMatchObject({ base_url: 'http://127.0.0.1:9999' });
      expect(config.systems[0]?.credentials).toEqual({
        type: 'api_key',
        header: 'X-Api-Key',
        value: 'demo-erp-key-7f3a',
      });
      expect(config.approvers.map((approver) => [approver.id, approver.groups])).toEqual([
        ['finance-approver', ['finance']],
        ['finance-approver-2', ['finance']],
        ['operations-approver', ['operations']],
      ]);
    },
  );

  it(verifies('config.secret-references', 'reports the demo ERP address missing from the environment'), () => {
    const text = readFileSync(new URL('../../../examples/gateway.config.yaml', import.meta.url), 'utf8');
    const result = loadConfigText(text, file, { DEMO_CALL_TOOL_URL: 'http://127.0.0.1:9998' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      { file, path: 'systems[0].base_url', line: 12, message: 'the environment variable DEMO_ERP_URL is not set' },
      { file, path: 'systems[2].url', line: 92, message: 'the environment variable DEMO_MCP_URL is not set' },
    ]);
  });
});

describe('loadConfigText: defaults', () => {
  it('an empty file gives the default settings and no agents', () => {
    expect(loaded('')).toEqual({
      settings: {
        enabled: true,
        approval_time: 86_400_000,
        retention: 400 * 86_400_000,
        join_pending_calls: true,
        allowed_staleness: 900_000,
        data_key: null,
        notifications: { webhooks: [] },
        limits: {
          concurrent_requests: 32,
          requests_per_second: 50,
          burst: 100,
          pending_calls: 100,
          request_bytes_per_second: 1_048_576,
          request_bytes_per_day: 1_073_741_824,
          groups: {},
          agents: {},
        },
      },
      systems: [],
      agents: [],
      approvers: [],
      customers: [],
      policies: [],
    });
  });

  it('an empty settings block gets enabled true, approval_time 24h and allowed_staleness 15m', () => {
    const config = loaded(yaml('settings: {}', 'agents: []'));
    expect(config.settings.enabled).toBe(true);
    expect(config.settings.approval_time).toBe(86_400_000);
    expect(config.settings.allowed_staleness).toBe(15 * 60_000);
    expect(config.settings.public_url).toBeUndefined();
  });

  it('settings that are given are kept alongside the defaults of the others', () => {
    const config = loaded(yaml('settings:', '  enabled: false', '  public_url: https://gateway.example.com'));
    expect(config.settings).toEqual({
      enabled: false,
      approval_time: 86_400_000,
      retention: 400 * 86_400_000,
      join_pending_calls: true,
      allowed_staleness: 900_000,
      notifications: { webhooks: [] },
      limits: {
        concurrent_requests: 32,
        requests_per_second: 50,
        burst: 100,
        pending_calls: 100,
        request_bytes_per_second: 1_048_576,
        request_bytes_per_day: 1_073_741_824,
        groups: {},
        agents: {},
      },
      public_url: 'https://gateway.example.com',
      data_key: null,
    });
  });

  it('an agent without groups or customer gets no groups and a null customer', () => {
    const config = loaded(yaml('agents:', '  - id: bare-agent', '    token: t0ken'));
    expect(config.agents).toEqual([
      { id: 'bare-agent', token: 't0ken', tokenFromEnvironment: false, subject: null, groups: [], customer: null },
    ]);
  });
});

describe('loadConfigText: durations', () => {
  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['24h', 86_400_000],
    ['7d', 604_800_000],
  ])('parses approval_time %s as %i ms', (text, ms) => {
    expect(loaded(withApprovalTime(text)).settings.approval_time).toBe(ms);
  });

  it.each([
    ['90s', 90_000],
    ['7d', 604_800_000],
  ])('parses allowed_staleness %s as %i ms', (text, ms) => {
    expect(loaded(yaml('settings:', `  allowed_staleness: ${text}`)).settings.allowed_staleness).toBe(ms);
  });

  it.each([
    ['15 minutes', '"15 minutes"'],
    ['0s', '"0s"'],
    ['-5m', '"-5m"'],
    ['1.5h', '"1.5h"'],
    ['24H', '"24H"'],
  ])(
    verifies('config.clear-errors', 'refuses approval_time %s naming its path, line, value and the expected form'),
    (text, shown) => {
      const problem = onlyProblem(withApprovalTime(text));
      expect(problem.file).toBe(file);
      expect(problem.path).toBe('settings.approval_time');
      expect(problem.line).toBe(4);
      expect(problem.message).toContain(shown);
      expect(problem.message).toContain('expected a duration such as 90s, 15m or 24h');
    },
  );

  it(verifies('config.clear-errors', 'refuses a number where a duration is expected, naming the number'), () => {
    const problem = onlyProblem(withApprovalTime('12'));
    expect(problem.path).toBe('settings.approval_time');
    expect(problem.line).toBe(4);
    expect(problem.message).toBe('expected a duration such as 90s, 15m or 24h (got 12)');
  });

  it(verifies('config.clear-errors', 'names allowed_staleness and its own line when that one is bad'), () => {
    const problem = onlyProblem(yaml('settings:', '  approval_time: 24h', '', '  allowed_staleness: 0m'));
    expect(problem).toMatchObject({ file, path: 'settings.allowed_staleness', line: 4 });
    expect(problem.message).toContain('"0m"');
  });

  it(verifies('config.clear-errors', 'reports every bad duration, each on its own line'), () => {
    const problems = refused(yaml('settings:', '  approval_time: soon', '  allowed_staleness: later'));
    expect(problems.map(({ path, line }) => ({ path, line }))).toEqual([
      { path: 'settings.approval_time', line: 2 },
      { path: 'settings.allowed_staleness', line: 3 },
    ]);
  });

  it(verifies('config.clear-errors', 'refuses a duration too large to be a number of milliseconds'), () => {
    // 10^400 days is not a finite number of milliseconds: the gateway must not load it as Infinity.
    const problem = onlyProblem(withApprovalTime(`1${'0'.repeat(400)}d`));
    expect(problem.path).toBe('settings.approval_time');
    expect(problem.line).toBe(4);
  });

  it('loads approval_time n<unit> as n times the unit in milliseconds (property)', () => {
    const units = [
      ['s', 1_000],
      ['m', 60_000],
      ['h', 3_600_000],
      ['d', 86_400_000],
    ] as const;
    fc.assert(
      fc.property(
        fc
          .constantFrom(...units)
          // Within the approval time's bounds (1s to 14d).
          .chain(([unit, factor]) =>
            fc.tuple(
              fc.integer({ min: 1, max: Math.floor((14 * 86_400_000) / factor) }),
              fc.constant([unit, factor] as const),
            ),
          ),
        ([n, [unit, factor]]) => {
          expect(loaded(withApprovalTime(`${n}${unit}`)).settings.approval_time).toBe(n * factor);
        },
      ),
    );
  });
});

describe('loadConfigText: unknown and invalid fields', () => {
  it(verifies('config.clear-errors', 'refuses an unknown top-level field, naming it'), () => {
    const problem = onlyProblem(yaml('settings:', '  enabled: true', 'approver: [alice]'));
    expect(problem.file).toBe(file);
    expect(problem.path).toBe('');
    expect(problem.line).toBe(3);
    expect(problem.message).toBe('unknown field(s) "approver"');
  });

  it(verifies('config.clear-errors', 'refuses an unknown settings field, naming it and its object'), () => {
    const problem = onlyProblem(yaml('settings:', '  approval_timeout: 24h'));
    expect(problem.path).toBe('settings');
    expect(problem.message).toBe('unknown field(s) "approval_timeout"');
  });

  it(verifies('config.clear-errors', 'refuses an unknown agent field, naming it and the agent'), () => {
    const problem = onlyProblem(
      yaml('agents:', '  - id: first', '    token: one', '  - id: second', '    token: two', '    colour: red'),
    );
    expect(problem.path).toBe('agents[1]');
    // The line of the unknown key itself, not of the object holding it.
    expect(problem.line).toBe(6);
    expect(problem.message).toBe('unknown field(s) "colour"');
  });

  it(
    verifies('config.clear-errors', 'refuses a duplicate agent id at agents[1].id, naming its line and the first use'),
    () => {
      const problem = onlyProblem(
        yaml(
          '# two agents with one id',
          'agents:',
          '  - id: procurement-agent',
          '    token: one',
          '  - token: two',
          '    id: procurement-agent',
        ),
      );
      expect(problem.file).toBe(file);
      expect(problem.path).toBe('agents[1].id');
      expect(problem.line).toBe(6);
      expect(problem.message).toContain('"procurement-agent"');
      expect(problem.message).toContain('agents[0]');
    },
  );

  it.each([
    ['Procurement-Agent', '"Procurement-Agent"'],
    ['support agent', '"support agent"'],
    ['-leading-dash', '"-leading-dash"'],
    ['a'.repeat(65), `"${'a'.repeat(56)}...`],
  ])(verifies('config.clear-errors', 'refuses the agent id %s, naming its path, line and value'), (id, shown) => {
    const problem = onlyProblem(yaml('agents:', '  - token: t0ken', `    id: ${id}`));
    expect(problem.path).toBe('agents[0].id');
    expect(problem.line).toBe(3);
    expect(problem.message).toContain(shown);
    expect(problem.message).toContain('expected lowercase letters, digits');
  });

  it(verifies('config.clear-errors', 'refuses an invalid group name at its index in the list'), () => {
    const problem = onlyProblem(
      yaml('agents:', '  - id: a', '    token: t', '    groups:', '      - ok', '      - Not OK'),
    );
    expect(problem.path).toBe('agents[0].groups[1]');
    expect(problem.line).toBe(6);
    expect(problem.message).toContain('"Not OK"');
  });

  it(verifies('config.clear-errors', 'refuses a public_url that is not a URL, naming the value'), () => {
    const problem = onlyProblem(yaml('settings:', '  public_url: gateway.example.com'));
    expect(problem.path).toBe('settings.public_url');
    expect(problem.line).toBe(2);
    expect(problem.message).toContain('"gateway.example.com"');
  });

  it(verifies('config.clear-errors', 'refuses a file that is not a mapping'), () => {
    const problem = onlyProblem(yaml('- settings'));
    expect(problem.path).toBe('');
    expect(problem.line).toBe(1);
    expect(problem.message).toContain('expected object');
  });
});

describe('loadConfigText: text that is not valid YAML', () => {
  it(verifies('config.clear-errors', 'refuses tab indentation, naming the line'), () => {
    const problem = onlyProblem('settings:\n\tenabled: true\n');
    expect(problem.file).toBe(file);
    expect(problem.message).toMatch(/^not valid YAML: .*[Tt]ab/);
    expect(problem.line).toBe(2);
  });

  it(verifies('config.clear-errors', 'refuses an unclosed flow mapping, naming a line'), () => {
    const problems = refused(yaml('settings: { enabled: true', 'agents: []'));
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) {
      expect(problem.message).toMatch(/^not valid YAML: /);
      expect(problem.line).toBe(2);
    }
  });

  it(verifies('config.clear-errors', 'refuses duplicate keys, naming the line of the second one'), () => {
    const problem = onlyProblem(yaml('settings:', '  approval_time: 24h', '  approval_time: 1h'));
    expect(problem.message).toMatch(/^not valid YAML: Map keys must be unique/);
    expect(problem.line).toBe(3);
  });

  it(verifies('config.clear-errors', 'refuses a duplicate key inside an agent'), () => {
    const problems = refused(yaml('agents:', '  - id: a', '    token: one', '    token: two'));
    expect(problems.map((problem) => problem.message)).toEqual(['not valid YAML: Map keys must be unique']);
  });
});

describe('loadConfigText: secret references', () => {
  const agentWithToken = (token: string): string =>
    yaml('settings:', '  enabled: true', 'agents:', '  - id: procurement-agent', `    token: ${token}`);

  it(verifies('config.secret-references', 'resolves an env:NAME reference from the environment argument'), () => {
    const config = loaded(agentWithToken(envReference('GATEWAY_TEST_PROCUREMENT_TOKEN')), {
      GATEWAY_TEST_PROCUREMENT_TOKEN: 's3cret-from-env',
    });
    expect(config.agents[0]?.token).toBe('s3cret-from-env');
  });

  it(verifies('config.secret-references', 'keeps a literal token as it is written'), () => {
    const config = loaded(agentWithToken('literal-token'), { literal: 'not this' });
    expect(config.agents[0]?.token).toBe('literal-token');
  });

  it(verifies('config.secret-references', 'keeps a reference inside other text as a literal'), () => {
    const config = loaded(agentWithToken(`"prefix-${envReference('TOKEN')}"`), { TOKEN: 'from-env' });
    expect(config.agents[0]?.token).toBe(`prefix-${envReference('TOKEN')}`);
  });

  it(
    verifies('config.secret-references', 'reports a missing variable at agents[0].token with its name and line'),
    () => {
      const problem = onlyProblem(agentWithToken(envReference('PROCUREMENT_TOKEN')), { OTHER_TOKEN: 'x' });
      expect(problem.file).toBe(file);
      expect(problem.path).toBe('agents[0].token');
      expect(problem.line).toBe(5);
      expect(problem.message).toContain('PROCUREMENT_TOKEN');
      expect(formatProblem(problem)).toBe(
        `${file}:5: agents[0].token: the environment variable PROCUREMENT_TOKEN is not set`,
      );
    },
  );

  it(verifies('config.secret-references', 'treats an empty variable as missing'), () => {
    const problem = onlyProblem(agentWithToken(envReference('PROCUREMENT_TOKEN')), { PROCUREMENT_TOKEN: '' });
    expect(problem.path).toBe('agents[0].token');
    expect(problem.message).toContain('PROCUREMENT_TOKEN');
  });

  it(verifies('config.secret-references', 'reports every missing variable, not only the first'), () => {
    const problems = refused(
      yaml(
        'agents:',
        '  - id: a',
        `    token: ${envReference('TOKEN_A')}`,
        '  - id: b',
        `    token: ${envReference('TOKEN_B')}`,
      ),
      { TOKEN_C: 'c' },
    );
    expect(problems.map(({ path, line }) => ({ path, line }))).toEqual([
      { path: 'agents[0].token', line: 3 },
      { path: 'agents[1].token', line: 5 },
    ]);
    expect(problems[0]?.message).toContain('TOKEN_A');
    expect(problems[1]?.message).toContain('TOKEN_B');
  });
});

describe('formatProblem', () => {
  it(verifies('config.clear-errors', 'renders file:line: path: message'), () => {
    expect(
      formatProblem({ file: 'conf/gateway.yaml', path: 'settings.approval_time', line: 7, message: 'bad value' }),
    ).toBe('conf/gateway.yaml:7: settings.approval_time: bad value');
  });

  it(verifies('config.clear-errors', 'leaves out an unknown line and names the top level'), () => {
    expect(formatProblem({ file: 'g.yaml', path: '', line: null, message: 'not valid YAML: oops' })).toBe(
      'g.yaml: (top level): not valid YAML: oops',
    );
  });

  it(verifies('config.clear-errors', 'renders a loaded problem with the file, line, path and value'), () => {
    const problem = onlyProblem(withApprovalTime('15 minutes'));
    const text = formatProblem(problem);
    expect(text.startsWith(`${file}:4: settings.approval_time: `)).toBe(true);
    expect(text).toContain('"15 minutes"');
  });
});

describe('loadConfigText: agent subjects', () => {
  it(
    verifies(
      'agents.config-subject',
      'takes an agent with a token, a subject, or both, one file serving locally and deployed',
    ),
    () => {
      const config = loaded(
        yaml(
          'agents:',
          '  - id: local-agent',
          '    token: local-t0ken',
          '  - id: deployed-agent',
          '    subject: 1example23456789abcdefghij',
          '    groups: [procurement]',
          '  - id: both-agent',
          '    token: both-t0ken',
          "    subject: 'auth0|both'",
          '    customer: customer-1042',
        ),
      );
      expect(config.agents.map(({ id, token, subject }) => ({ id, token, subject }))).toEqual([
        { id: 'local-agent', token: 'local-t0ken', subject: null },
        { id: 'deployed-agent', token: null, subject: '1example23456789abcdefghij' },
        { id: 'both-agent', token: 'both-t0ken', subject: 'auth0|both' },
      ]);
    },
  );

  it(verifies('agents.config-subject', 'refuses an agent with neither a token nor a subject'), () => {
    const problem = onlyProblem(yaml('agents:', '  - id: nobody', '    groups: [procurement]'));
    expect(problem).toMatchObject({ path: 'agents[0]' });
    expect(problem.message).toContain('give the agent a token (local), a subject (deployed), or both');
  });

  it(verifies('agents.config-subject', 'refuses two agents with the same subject, naming both agents'), () => {
    const problem = onlyProblem(
      yaml(
        'agents:',
        '  - id: procurement-agent',
        '    subject: 1example23456789abcdefghij',
        '  - id: support-agent',
        '    subject: 1example23456789abcdefghij',
      ),
    );
    expect(problem).toMatchObject({ file, path: 'agents[1].subject', line: 5 });
    expect(problem.message).toMatch(
      /^agents "procurement-agent" and "support-agent" have the same subject; each agent needs its own/,
    );
    expect(onlyProblem(yaml('agents:', '  - id: spaced', '    subject: two words')).path).toBe('agents[0].subject');
  });
});

describe('loadConfigText: agent tokens', () => {
  const twoAgents = (first: string, second: string) =>
    yaml(
      'agents:',
      '  - id: procurement-agent',
      `    token: ${first}`,
      '  - id: support-agent',
      `    token: ${second}`,
    );

  it(
    verifies('config.unique-tokens', 'refuses two agents with the same token, naming both agents and never the token'),
    () => {
      const problem = onlyProblem(twoAgents('shared-t0ken', 'shared-t0ken'));
      expect(problem).toMatchObject({ file, path: 'agents[1].token', line: 5 });
      expect(problem.message).toBe(
        'agents "procurement-agent" and "support-agent" have the same token; each agent needs its own',
      );
      expect(formatProblem(problem)).not.toContain('shared-t0ken');
    },
  );

  it(
    verifies(
      'config.unique-tokens',
      'compares tokens once resolved: a literal and a variable, or two references to one variable',
    ),
    () => {
      const resolved = onlyProblem(twoAgents('from-env-t0ken', envReference('SUPPORT_TOKEN')), {
        SUPPORT_TOKEN: 'from-env-t0ken',
      });
      expect(resolved.path).toBe('agents[1].token');
      expect(formatProblem(resolved)).not.toContain('from-env-t0ken');
      // Checked where the variable is not set (config:check's placeholders): one variable is one token.
      const result = loadConfigText(
        twoAgents(envReference('ONE'), envReference('ONE')),
        file,
        {},
        {
          unsetVariables: 'placeholder',
        },
      );
      expect(result.ok ? [] : result.problems.map((found) => found.path)).toEqual(['agents[1].token']);
      // Two different unset variables are not the same token.
      expect(
        loadConfigText(twoAgents(envReference('ONE'), envReference('TWO')), file, {}, { unsetVariables: 'placeholder' })
          .ok,
      ).toBe(true);
    },
  );

  it(verifies('local.banner-secrets', 'marks the tokens and passwords that came from the environment'), () => {
    const config = loaded(
      yaml(
        ...twoAgents('literal-t0ken', envReference('SUPPORT_TOKEN')).trimEnd().split('\n'),
        'approvers:',
        '  - id: finance-approver',
        `    password: ${envReference('FINANCE_PASSWORD')}`,
        '  - id: demo-approver',
        '    password: demo-password',
      ),
      { SUPPORT_TOKEN: 'env-t0ken', FINANCE_PASSWORD: 'env-password' },
    );
    expect(config.agents.map((agent) => [agent.id, agent.tokenFromEnvironment])).toEqual([
      ['procurement-agent', false],
      ['support-agent', true],
    ]);
    expect(config.approvers.map((person) => [person.id, person.passwordFromEnvironment])).toEqual([
      ['finance-approver', true],
      ['demo-approver', false],
    ]);
  });
});

describe('loadConfigText: a file caught half-written', () => {
  const system = ['systems:', '  - key: crm', '    base_url: http://crm.test', '    openapi: crm.yaml'];

  it(
    verifies(
      'config.no-half-written',
      'refuses systems without a policies entry, and says how to run nothing on purpose',
    ),
    () => {
      const problem = onlyProblem(yaml(...system, 'agents: []'));
      expect(formatProblem(problem)).toBe(
        `${file}: policies: missing: a configuration with systems must list its policy files (without policies nothing runs; write "policies: []" to mean that)`,
      );
      expect(loaded(yaml(...system, 'policies: []')).policies).toEqual([]);
      // Without systems there is nothing to take away.
      expect(loaded(yaml('agents: []')).policies).toEqual([]);
    },
  );
});

describe('loadConfigText: the credential header of an api_key system', () => {
  const withKeyHeader = (header: string): string =>
    yaml(
      'systems:',
      '  - key: erp',
      '    base_url: http://127.0.0.1:9',
      '    operations: [{ id: ping, method: GET, path: /ping, description: Ping. }]',
      '    credentials:',
      '      type: api_key',
      `      header: ${JSON.stringify(header)}`,
      '      value: k',
      'policies: []',
    );

  it.each(['api_key', 'X-Api-Key', 'x.key', "key!#$%&'*+^_`|~"])(
    verifies('config.credential-header', 'accepts %s, an RFC 9110 token, as the api key header'),
    (header) => {
      expect(loaded(withKeyHeader(header)).systems[0]?.credentials).toEqual({ type: 'api_key', header, value: 'k' });
    },
  );

  it.each(['X Api Key', 'x-key:', 'key\u00e9', '', '"quoted"'])(
    verifies('config.credential-header', 'refuses %j, which is not a header name, naming the value'),
    (header) => {
      const problem = onlyProblem(withKeyHeader(header));
      expect(problem.path).toBe('systems[0].credentials.header');
      expect(problem.line).toBe(7);
      expect(problem.message).toContain('expected an HTTP header name (RFC 9110 token');
      expect(problem.message).toContain(`(got ${JSON.stringify(header)})`);
    },
  );

  it.each([
    'Host',
    'connection',
    'Transfer-Encoding',
    'Content-Length',
    'TE',
    'x-request-id',
    'Traceparent',
    'Content-Type',
  ])(
    verifies('config.credential-header', 'refuses %s, a header the gateway or its HTTP client sets itself'),
    (header) => {
      const problem = onlyProblem(withKeyHeader(header));
      expect(problem.path).toBe('systems[0].credentials.header');
      expect(problem.message).toContain('the gateway sets this one itself');
    },
  );
});
