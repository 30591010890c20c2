// `npm run config:check` as an admin runs it: the demo passes, and each kind of mistake fails
// with a message that names the file, the line, the path and the value.
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let demo: string;

const check = (args: string[]) =>
  runProcess(process.execPath, ['--import', 'tsx', projectPath('scripts/config-check.ts'), ...args], {
    cwd: projectPath(),
    env: { ...process.env, DEMO_ERP_URL: '', DEMO_CALL_TOOL_URL: 'http://127.0.0.1:2' },
  });

beforeAll(async () => {
  folder = await temporaryFolder('gateway-check-');
  await cp(projectPath('examples'), join(folder.path, 'org'), { recursive: true });
  demo = await readFile(projectPath('examples/gateway.config.yaml'), 'utf8');
});
afterAll(async () => {
  await folder.remove();
});

/** Writes a variant of the demo configuration (next to its OpenAPI document) and checks it. */
const checkVariant = async (name: string, text: string) => {
  const file = join(folder.path, 'org', `${name}.yaml`);
  await writeFile(file, text);
  return { file, ...(await check([file])) };
};

const lineOf = (text: string, needle: string): number =>
  text.split('\n').findIndex((line) => line.includes(needle)) + 1;

describe('npm run config:check', () => {
  it(
    verifies(
      ['config.check-command', 'agents.config-check-note'],
      'passes the demo configuration, lists its tools, and says what an agent not listed by subject is in AWS',
    ),
    async () => {
      const result = await check(['examples/gateway.config.yaml']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/examples\/gateway.config.yaml is valid \(version [0-9a-f]{16}\)/);
      expect(result.stdout).toContain('11 tools (erp: 8, everything: 3)');
      expect(result.stdout).toContain('erp.shipments.track  [read]');
      expect(result.stdout).toContain('note: systems[0].base_url: ${env:DEMO_ERP_URL} is not set here');
      expect(result.stdout).toContain(
        "note: in AWS a token's subject names its agent: a subject no agents: entry lists is an agent with no groups and no customer",
      );
      expect(result.stdout).toContain('(procurement-agent, support-agent have no subject: local only)');
    },
  );

  it(verifies('config.check-command', 'fails with --strict-env when a referenced variable is unset'), async () => {
    const result = await check(['examples/gateway.config.yaml', '--strict-env']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `examples/gateway.config.yaml:${lineOf(demo, 'base_url:')}: systems[0].base_url: the environment variable DEMO_ERP_URL is not set`,
    );
  });

  const mistakes: { name: string; edit: (text: string) => string; expected: (text: string) => RegExp | string }[] = [
    {
      name: 'bad-duration',
      edit: (text) => text.replace('approval_time: 24h', 'approval_time: 1 day'),
      expected: (text) =>
        `:${lineOf(text, 'approval_time')}: settings.approval_time: expected a duration such as 90s, 15m or 24h (got "1 day")`,
    },
    {
      name: 'unknown-field',
      edit: (text) => text.replace('  enabled: true', '  enabled: true\n  enable_everything: true'),
      expected: (text) => `:${lineOf(text, 'enable_everything')}: settings: unknown field(s) "enable_everything"`,
    },
    {
      name: 'bad-system-key',
      edit: (text) => text.replace('  - key: erp', '  - key: ERP System'),
      expected: () => /systems\[0\]\.key: expected a lowercase key such as "erp".*\(got "ERP System"\)/,
    },
    {
      name: 'missing-openapi',
      edit: (text) => text.replace('openapi: erp/openapi.yaml', 'openapi: erp/missing.yaml'),
      expected: (text) => `:${lineOf(text, 'openapi:')}: systems[0].openapi: the file erp/missing.yaml cannot be read`,
    },
    {
      name: 'escaping-path',
      edit: (text) => text.replace('openapi: erp/openapi.yaml', 'openapi: ../../etc/passwd'),
      expected: () => 'systems[0].openapi: "../../etc/passwd" must be inside the configuration\'s folder',
    },
    {
      name: 'unknown-disabled-tool',
      edit: (text) =>
        text.replace(
          '    amount_fields: [amount]',
          '    amount_fields: [amount]\n    disabled_tools: [erp.vendors.remove]',
        ),
      expected: () => 'systems[0].disabled_tools[0]: there is no tool named erp.vendors.remove',
    },
    {
      name: 'unknown-access-override',
      edit: (text) =>
        text.replace(
          '    amount_fields: [amount]',
          '    amount_fields: [amount]\n    access:\n      erp.orders.search: read',
        ),
      expected: () => 'systems[0].access.erp.orders.search: there is no tool named erp.orders.search',
    },
    {
      name: 'duplicate-tool-name',
      edit: (text) => text.replace('      - id: shipments.track', '      - id: vendors.get'),
      expected: () =>
        /:\d+: systems\[0\]\.operations\[0\]: systems\[0\]\.operations\[0\]: the tool name erp\.vendors\.get is also used by openapi: GET \/vendors\/\{vendor_id\}/,
    },
    {
      name: 'path-segment-without-field',
      edit: (text) => text.replace('path: /shipments/{tracking_number}', 'path: /shipments/{tracking_id}'),
      expected: () => 'the path segment {tracking_id} has no input field of that name',
    },
    {
      name: 'duplicate-agent',
      edit: (text) => text.replace('  - id: support-agent', '  - id: procurement-agent'),
      expected: (text) =>
        `:${lineOf(text, '  - id: procurement-agent\n') || text.split('\n').lastIndexOf('  - id: procurement-agent') + 1}: agents[1].id: id "procurement-agent" is already used by agents[0]`,
    },
    {
      name: 'bad-credentials',
      edit: (text) => text.replace('      type: api_key', '      type: kerberos'),
      expected: () => /systems\[0\]\.credentials\.type: .*\(got "kerberos"\)/,
    },
    {
      name: 'bad-size',
      edit: (text) => text.replace('max_response_size: 200KB', 'max_response_size: 2GB'),
      expected: () => 'systems[0].max_response_size: expected a size such as 256KB or 1MB (at most 64MB) (got "2GB")',
    },
    {
      name: 'not-yaml',
      edit: (text) => text.replace('agents:', 'agents: [unclosed'),
      expected: () => /: not valid YAML: /,
    },
  ];

  it.each(mistakes)(
    verifies(['config.check-command', 'config.clear-errors'], 'refuses $name with a clear message'),
    async (mistake) => {
      const text = mistake.edit(demo);
      expect(text).not.toBe(demo);
      const result = await checkVariant(mistake.name, text);
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toContain(`${result.file} is not valid`);
      const expected = mistake.expected(text);
      if (typeof expected === 'string') expect(result.stderr).toContain(expected);
      else expect(result.stderr).toMatch(expected);
    },
  );

  it(
    verifies(
      ['config.check-command', 'catalog.openapi'],
      'refuses an invalid OpenAPI document with the parser’s message',
    ),
    async () => {
      await mkdir(join(folder.path, 'broken'), { recursive: true });
      const openapi = (await readFile(projectPath('examples/erp/openapi.yaml'), 'utf8')).replace(
        '      operationId: purchase_orders.create\n',
        '      operationId: purchase_orders.create\n      parameters:\n        - name: unknown_param\n          in: path\n          required: true\n          schema: { type: string }\n',
      );
      await writeFile(join(folder.path, 'broken', 'openapi.yaml'), openapi);
      await writeFile(
        join(folder.path, 'broken', 'gateway.config.yaml'),
        demo.replace('openapi: erp/openapi.yaml', 'openapi: openapi.yaml'),
      );
      const result = await check([join(folder.path, 'broken', 'gateway.config.yaml')]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/systems\[0\]\.openapi: openapi\.yaml: .*unknown_param/);
    },
  );

  it(
    verifies(
      ['config.check-command', 'config.unique-tokens'],
      'refuses two agents with the same token, naming both and not the token',
    ),
    async () => {
      const text = demo.replace('token: demo-support-token', 'token: demo-procurement-token');
      expect(text).not.toBe(demo);
      const result = await checkVariant('duplicate-token', text);
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toContain(
        `:${text.split('\n').lastIndexOf('    token: demo-procurement-token') + 1}: agents[1].token: agents "procurement-agent" and "support-agent" have the same token; each agent needs its own`,
      );
      expect(result.stderr + result.stdout).not.toContain('demo-procurement-token');
    },
  );

  it(
    verifies(
      ['config.check-command', 'config.no-half-written'],
      'refuses a file cut before policies: and an empty policy file',
    ),
    async () => {
      const cut = await checkVariant('cut-short', demo.slice(0, demo.indexOf('policies:')));
      expect(cut.code, cut.stdout).toBe(1);
      expect(cut.stderr).toContain('policies: missing: a configuration with systems must list its policy files');
      await writeFile(join(folder.path, 'org', 'policies', 'empty.cedar'), '\n');
      const empty = await checkVariant('empty-policy', demo.replace('policies/demo.cedar', 'policies/empty.cedar'));
      expect(empty.code, empty.stdout).toBe(1);
      expect(empty.stderr).toContain('policies[0]: the policy file policies/empty.cedar holds no policy');
    },
  );

  it(verifies('config.check-command', 'answers usage errors with exit code 2'), async () => {
    const result = await check(['one.yaml', 'two.yaml']);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('Usage: npm run config:check');
  });
});

describe('npm run config:check: parameters the gateway does not take from agents', () => {
  it(
    verifies(
      ['config.check-command', 'catalog.header-parameters'],
      'keeps a document with cookie and hop-by-hop parameters valid, noting what it leaves out',
    ),
    async () => {
      await mkdir(join(folder.path, 'cookies'), { recursive: true });
      const openapi = (await readFile(projectPath('examples/erp/openapi.yaml'), 'utf8')).replace(
        'paths:\n',
        `paths:
  /me:
    get:
      operationId: me.get
      parameters:
        - { name: session, in: cookie, required: true, schema: { type: string } }
      responses: { "200": { description: OK } }
  /me/preferences:
    get:
      operationId: me.preferences
      parameters:
        - { name: Connection, in: header, required: false, schema: { type: string } }
        - { name: X-Locale, in: header, required: false, schema: { type: string } }
      responses: { "200": { description: OK } }
`,
      );
      await writeFile(join(folder.path, 'cookies', 'openapi.yaml'), openapi);
      await writeFile(
        join(folder.path, 'cookies', 'gateway.config.yaml'),
        demo
          .replace('openapi: erp/openapi.yaml', 'openapi: openapi.yaml')
          .replace('    amount_fields: [amount]', '    amount_fields: [amount]\n    disabled_tools: [erp.me.get]'),
      );
      await cp(projectPath('examples/policies'), join(folder.path, 'cookies', 'policies'), { recursive: true });
      const result = await check([join(folder.path, 'cookies', 'gateway.config.yaml')]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        ':13: systems[0].openapi: openapi: GET /me (erp.me.get) is left out: it needs the cookie parameter "session", which the gateway does not send',
      );
      expect(result.stdout).toContain(
        ':13: systems[0].openapi: openapi: GET /me/preferences (erp.me.preferences): the header parameter "Connection" is not offered: the gateway does not take it from agents',
      );
      expect(result.stdout).toContain('erp.me.preferences  [read]');
      expect(result.stdout).not.toContain('erp.me.get  [');
    },
  );
});
