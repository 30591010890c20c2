// The three kinds of system in the configuration file: what each takes, and the addresses allowed.
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../shared/config/load.js';
import { type ConfigProblem, formatProblem, type ResolvedConfig } from '../../../shared/config/resolved.js';
import { verifies } from '../../support/requirements.js';

const file = 'gateway.config.yaml';
const yaml = (...lines: string[]): string => `${lines.join('\n')}\n`;

const load = (text: string, environment: Record<string, string> = {}) => loadConfigText(text, file, environment);

const loaded = (text: string, environment: Record<string, string> = {}): ResolvedConfig => {
  const result = load(text, environment);
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
  return result.config;
};

const problems = (text: string): ConfigProblem[] => {
  const result = load(text);
  if (result.ok) throw new Error('expected the configuration to be refused');
  return result.problems;
};

const callToolSystem = [
  'systems:',
  '  - key: notes',
  '    kind: call-tool',
  '    url: ws://127.0.0.1:9100/',
  '    tools:',
  '      - name: read-note',
  '        description: Reads a note.',
  '        access: read',
  '        input_schema: { type: object, properties: { id: { type: string } } }',
];

const mcpSystem = (url = 'https://tools.example.com/mcp') => [
  'systems:',
  '  - key: docs',
  '    kind: mcp',
  `    url: ${url}`,
];

describe('kinds of system', () => {
  it(verifies('systems.kinds', 'takes a system without a kind as an OpenAPI system'), () => {
    const config = loaded(
      yaml(
        'systems:',
        '  - key: erp',
        '    base_url: http://erp.test',
        '    operations: [{ id: ping, method: GET, path: /ping, description: Ping. }]',
        'policies: []',
      ),
    );
    expect(config.systems[0]).toMatchObject({ kind: 'openapi', base_url: 'http://erp.test' });
  });

  it(
    verifies(
      ['systems.kinds', 'systems.urls'],
      'reads a call-tool system: its url (trailing slash dropped) and its tools',
    ),
    () => {
      const config = loaded(yaml(...callToolSystem, 'policies: []'));
      expect(config.systems[0]).toMatchObject({
        kind: 'call-tool',
        url: 'ws://127.0.0.1:9100',
        timeout: 10_000,
        tools: [{ name: 'read-note', access: 'read', description: 'Reads a note.' }],
      });
    },
  );

  it(
    verifies(
      'systems.kinds',
      'reads an MCP system with its defaults and OAuth client credentials from the environment',
    ),
    () => {
      const config = loaded(
        yaml(
          ...mcpSystem(),
          '    credentials:',
          '      type: oauth_client_credentials',
          '      client_id: gateway',
          `      client_secret: \${env:DOCS_SECRET}`,
          'policies: []',
        ),
        { DOCS_SECRET: 's3cret' },
      );
      expect(config.systems[0]).toMatchObject({
        kind: 'mcp',
        url: 'https://tools.example.com/mcp',
        protocol: 'auto',
        max_concurrency: 8,
        refresh: 300_000,
        credentials: {
          type: 'oauth_client_credentials',
          client_id: 'gateway',
          client_secret: 's3cret',
          token_url: null,
          scope: null,
        },
      });
    },
  );

  it(verifies('systems.kinds', 'refuses an unknown kind, naming the three kinds'), () => {
    const found = problems(yaml('systems:', '  - key: x', '    kind: soap', '    url: http://x.test', 'policies: []'));
    expect(found.map((problem) => problem.message).join('\n')).toContain('openapi (the default), call-tool or mcp');
    expect(found[0]?.path).toBe('systems[0].kind');
  });

  it(verifies('systems.kinds', 'refuses a field of another kind (an OpenAPI document on an MCP system)'), () => {
    const found = problems(yaml(...mcpSystem(), '    openapi: docs.yaml', 'policies: []'));
    expect(found.map((problem) => `${problem.path}: ${problem.message}`).join('\n')).toMatch(/systems\[0\].*openapi/);
  });

  it(verifies('systems.kinds', 'refuses a call-tool system without tools, and two tools of one name'), () => {
    expect(
      problems(
        yaml('systems:', '  - key: n', '    kind: call-tool', '    url: ws://x.test', '    tools: []', 'policies: []'),
      )[0]?.message,
    ).toContain('at least one tool');
    const twice = problems(
      yaml(
        ...callToolSystem,
        '      - name: read-note',
        '        description: Again.',
        '        access: write',
        'policies: []',
      ),
    );
    expect(twice.map((problem) => problem.message).join('\n')).toContain('is already used by');
  });

  it(verifies('systems.urls', 'allows ws(s) only for call-tool systems, and no query or fragment anywhere'), () => {
    expect(problems(yaml(...mcpSystem('ws://tools.example.com/mcp'), 'policies: []'))[0]).toMatchObject({
      path: 'systems[0].url',
      message: expect.stringContaining('expected a http/https URL'),
    });
    expect(problems(yaml(...mcpSystem('https://tools.example.com/mcp?x=1'), 'policies: []'))[0]?.message).toContain(
      'without query or fragment',
    );
    for (const url of ['http://p.test', 'https://p.test', 'ws://p.test', 'wss://p.test/base']) {
      const text = yaml(
        ...callToolSystem.map((line) => (line.includes('url:') ? `    url: ${url}` : line)),
        'policies: []',
      );
      expect(loaded(text).systems[0]).toMatchObject({ url });
    }
    const ftp = yaml(
      ...callToolSystem.map((line) => (line.includes('url:') ? '    url: ftp://p.test' : line)),
      'policies: []',
    );
    expect(problems(ftp)[0]?.message).toContain('expected a http/https/ws/wss URL');
  });
});
