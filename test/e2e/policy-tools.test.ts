// The policy tools as an admin runs them, as child processes on the demo organization:
// policy:explain (which tools an agent sees, and why not), policy:test (the demo's cases pass; a
// wrong expectation or a broken case file fails readably), and config:check's warnings about
// what the policies cannot reach.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpCatalogFiles, mcpCatalogFolder } from '../../infra/local/mcp-catalog-files.js';
import { projectPath } from '../../infra/paths.js';
import { mcpToolSpecs } from '../../shared/catalog/mcp-tools.js';
import { demoAddresses } from '../support/demo-environment.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;

/** A policy tool as an admin runs it; a data folder of its own, so no running gateway's lists count. */
const script = (name: string, args: string[]) =>
  runProcess(process.execPath, ['--import', 'tsx', projectPath('scripts', name), ...args], {
    cwd: projectPath(),
    env: { ...process.env, ...demoAddresses, GATEWAY_DATA_DIR: join(folder.path, 'no-gateway-ran-here') },
  });
let demo: string;

beforeAll(async () => {
  folder = await temporaryFolder('gateway-policy-tools-');
  await cp(projectPath('examples'), join(folder.path, 'org'), { recursive: true });
  demo = await readFile(projectPath('examples/gateway.config.yaml'), 'utf8');
});
afterAll(async () => {
  await folder.remove();
});

const written = async (name: string, text: string): Promise<string> => {
  const file = join(folder.path, name);
  await writeFile(file, text);
  return file;
};

interface ExplainedTool {
  readonly tool: string;
  readonly visible: boolean;
  readonly hidden: string | null;
  readonly summary: string;
}

describe('npm run policy:explain', () => {
  it(
    verifies('ops.policy-explain', 'shows one agent a tool another cannot see, with the reason, as text and JSON'),
    async () => {
      const [procurement, support] = await Promise.all(
        ['procurement-agent', 'support-agent'].map((agent) =>
          script('policy-explain.ts', ['--agent', agent, '--offline', '--json']),
        ),
      );
      expect(procurement?.code, procurement?.stderr).toBe(0);
      expect(support?.code, support?.stderr).toBe(0);
      const tools = (stdout: string): ExplainedTool[] => JSON.parse(stdout).tools;
      const order = (stdout: string) => tools(stdout).find((tool) => tool.tool === 'erp.purchase_orders.create');
      expect(order(procurement?.stdout ?? '')).toMatchObject({ visible: true, hidden: null });
      expect(order(support?.stdout ?? '')).toMatchObject({ visible: false, hidden: 'no_permit' });
      expect(tools(support?.stdout ?? '').find((tool) => tool.tool === 'everything.get-env')).toMatchObject({
        hidden: 'disabled',
      });
      expect(tools(support?.stdout ?? '').find((tool) => tool.tool === 'erp.vendors.delete')).toMatchObject({
        hidden: 'forbidden',
      });

      const text = await script('policy-explain.ts', ['--agent', 'support-agent', '--offline']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^ {2}sees 5 of 12 tools:$/m);
      expect(text.stdout).toMatch(
        /^ {4}erp\.purchase_orders\.create +no permit applies to support-agent: the permits that mention it \(small-purchase-orders \(examples\/policies\/demo\.cedar:7\), large-purchase-orders \(examples\/policies\/demo\.cedar:12\), high-stakes-purchase-orders \(examples\/policies\/demo\.cedar:23\)\) are for other agents or groups$/m,
      );
      expect(text.stdout).toMatch(
        /^ {4}erp\.vendors\.delete +a forbid always holds for this agent: no-vendor-deletion \(examples\/policies\/demo\.cedar:65\)$/m,
      );
      expect(text.stdout).toMatch(
        /^ {4}everything\.get-env +turned off in the configuration \(systems\[1\]\.disabled_tools\)$/m,
      );
    },
  );

  it(
    verifies('ops.policy-explain', 'explains one tool: the decisions its arguments get and its policies'),
    async () => {
      const result = await script('policy-explain.ts', [
        '--agent',
        'procurement-agent',
        '--tool',
        'erp.purchase_orders.create',
        '--offline',
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        [
          'erp.purchase_orders.create: visible',
          '  the decision depends on the arguments; some arguments get:',
          '    run (runs at once): small-purchase-orders (examples/policies/demo.cedar:7)',
          '    hold (staff approval by finance): large-purchase-orders (examples/policies/demo.cedar:12)',
          '    hold (staff approval by 2 of finance (escalates to operations after 4h; sign-in within 5m)): high-stakes-purchase-orders (examples/policies/demo.cedar:23)',
          '    deny (refused by a forbid): positive-amounts (examples/policies/demo.cedar:60)',
          '  policies that mention it (for any agent):',
          '    permit small-purchase-orders  examples/policies/demo.cedar:7',
        ].join('\n'),
      );
    },
  );

  it(
    verifies('ops.policy-explain', "knows an MCP system it cannot ask by the running gateway's last list"),
    async () => {
      // The demo's MCP server has an address only in the runtime's environment; the running
      // gateway kept its last list (and its pins) in the data folder.
      const dataDir = join(folder.path, 'gateway-data');
      const listed = mcpToolSpecs('reference', [
        { name: 'echo', description: 'Echoes the message.', inputSchema: { type: 'object' } },
      ]);
      await new McpCatalogFiles(mcpCatalogFolder(dataDir)).write('reference', {
        url: 'http://127.0.0.1:8791/mcp',
        fetchedAt: Date.parse('2026-12-01T10:00:00Z'),
        specs: listed.specs,
        leftOut: [],
      });
      const { DEMO_MCP_URL: _unset, ...withoutServer } = demoAddresses;
      const run = await runProcess(
        process.execPath,
        ['--import', 'tsx', projectPath('scripts', 'policy-explain.ts'), '--agent', 'procurement-agent'],
        { cwd: projectPath(), env: { ...process.env, ...withoutServer, GATEWAY_DATA_DIR: dataDir } },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^ {4}reference\.echo +runs at once/m);
      expect(run.stdout).toContain(
        'reference: its tools as the running gateway last listed them (2026-12-01T10:00:00.000Z)',
      );
      expect(run.stdout).not.toMatch(/not known:/);
    },
  );

  it(verifies('ops.policy-explain', 'refuses an unknown agent or tool with exit 2'), async () => {
    const agent = await script('policy-explain.ts', ['--agent', 'nobody', '--offline']);
    expect(agent.code).toBe(2);
    expect(agent.stderr).toContain(
      'unknown agent "nobody": examples/gateway.config.yaml names these agents: procurement-agent, support-agent',
    );
    const tool = await script('policy-explain.ts', ['--agent', 'support-agent', '--tool', 'erp.nothing', '--offline']);
    expect(tool.code).toBe(2);
    expect(tool.stderr).toContain('unknown tool "erp.nothing"');
  });
});

describe('npm run policy:test', () => {
  it(verifies('ops.policy-test', "passes the demo's cases, asking the MCP server as config:check does"), async () => {
    const result = await script('policy-test.ts', ['examples/policy-cases.yaml']);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('14 of 14 cases pass\n');
    expect(result.stdout).toContain(
      'procurement-agent → erp.purchase_orders.create: hold, staff approval by finance; by large-purchase-orders (examples/policies/demo.cedar:12)',
    );
    expect(result.stdout).toContain('argument error /currency: not_allowed_value');
  });

  it(verifies('local.cli-commands-as-documented', "runs the policy page's command as printed"), async () => {
    const page = await readFile(projectPath('docs', 'policies.md'), 'utf8');
    const printed = /^npm run policy:test -- (.+)$/m.exec(page)?.[1];
    expect(printed).toBeDefined();
    const result = await script('policy-test.ts', (printed ?? '').split(' '));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('14 of 14 cases pass\n');
  });

  it(verifies('ops.policy-test', 'fails a wrong expectation, saying expected and got at the case line'), async () => {
    const file = await written(
      'failing.yaml',
      [
        '- name: a small order',
        '  agent: procurement-agent',
        '  tool: erp.purchase_orders.create',
        '  arguments: { vendor_id: V-1, amount: 10, currency: EUR }',
        '  expect: { decision: run }',
        '',
        '- name: a large refund',
        '  agent: support-agent',
        '  tool: erp.refunds.create',
        '  arguments: { order_reference: SO-1, amount: 750, currency: EUR }',
        '  expect: { decision: hold, approval: customer }',
        '',
      ].join('\n'),
    );
    const result = await script('policy-test.ts', [file, '--offline']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`ok    a small order  (${file}:1)`);
    expect(result.stdout).toContain(
      `FAIL  a large refund  (${file}:7)\n      support-agent → erp.refunds.create: hold, customer confirmation, then staff approval by finance; by large-customer-refunds (examples/policies/demo.cedar:52)\n      expected approval customer, got customer and finance (customer confirmation, then staff approval by finance)\n`,
    );
    expect(result.stdout).toContain(`1 of 2 cases pass; failing: a large refund (${file}:7)`);
  });

  it(verifies('ops.policy-test', 'refuses a case file that is not valid, with the line'), async () => {
    const file = await written(
      'malformed.yaml',
      ['- name: typo', '  agent: support-agent', '  tool: erp.refunds.create', '  expect: { decison: hold }', ''].join(
        '\n',
      ),
    );
    const result = await script('policy-test.ts', [file, '--offline']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file} is not a valid case file:`);
    expect(result.stderr).toContain(`${file}:4: case 1 ("typo"), expect: unknown field "decison"`);
    expect(result.stderr).toContain(`${file}:4: case 1 ("typo"), expect.decision: missing`);
  });
});

describe('npm run config:check on what the policies cannot reach', () => {
  it(
    verifies(
      ['ops.config-check-reach', 'ops.config-check-approvers'],
      'warns of a system no permit reaches and of an approver group nobody is in',
    ),
    async () => {
      const text = demo
        .replace(
          'systems:\n',
          'systems:\n  - key: hr\n    base_url: http://127.0.0.1:9\n    operations:\n      - { id: people.list, method: GET, path: /people, description: Lists people. }\n',
        )
        .replace(/ {2}- id: operations-approver\n(?: {4}.*\n)+/, '');
      expect(text).not.toContain('operations-approver');
      const file = join(folder.path, 'org', 'unreached.yaml');
      await writeFile(file, text);
      const result = await script('config-check.ts', [file, '--offline']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        `warning: ${file}:10: systems[0]: no permit can ever apply to any tool of hr (1 tool): they will be hidden from every agent`,
      );
      const policies = join(folder.path, 'org', 'policies', 'demo.cedar');
      expect(result.stdout).toContain(
        `warning: ${policies}:74: policy "demo-tool-sums": @approvers("operations"): no approver under approvers: belongs to the group operations`,
      );
      expect(result.stdout).toContain(`warning: ${policies}:85: policy "reference-writes": @approvers("operations")`);
      // The demo itself: every system reached, every approver group staffed.
      const clean = await script('config-check.ts', ['examples/gateway.config.yaml', '--offline']);
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stdout).not.toContain('warning:');
    },
  );
});

describe('npm run config:check on escalations nobody could take', () => {
  it(
    verifies(
      'annotations.config-check-escalation',
      'exits 1 on an escalation to an unknown group or after expiry, each at its policy, and says nothing is valid',
    ),
    async () => {
      const policies = join(folder.path, 'org', 'policies', 'escalating.cedar');
      const cedar = await readFile(projectPath('examples/policies/demo.cedar'), 'utf8');
      const extra = [
        '@id("escalates-nowhere")',
        '@approval("staff")',
        '@approvers("finance")',
        '@escalate("4h, nobody-here")',
        'permit (principal in Group::"procurement", action == Action::"erp.vendors.delete", resource);',
        '@id("escalates-too-late")',
        '@approval("staff")',
        '@approvers("finance")',
        '@escalate("1d, operations")',
        'permit (principal in Group::"support", action == Action::"erp.vendors.delete", resource);',
      ];
      await writeFile(policies, `${cedar}${extra.join('\n')}\n`);
      const first = cedar.split('\n').length;
      const file = join(folder.path, 'org', 'escalating.yaml');
      await writeFile(file, demo.replace('  - policies/demo.cedar', '  - policies/escalating.cedar'));
      const result = await script('config-check.ts', [file, '--offline']);
      expect(result.code).toBe(1);
      expect(result.stdout).not.toContain('is valid');
      expect(result.stderr).toContain(`${file} is not valid (2 problems):`);
      expect(result.stderr).toContain(
        `${policies}:${first}: policy "escalates-nowhere": @escalate("4h, nobody-here"): nobody-here is a group this configuration does not know`,
      );
      expect(result.stderr).toContain(
        `${policies}:${first + 5}: policy "escalates-too-late": @escalate("1d, operations"): a held call expires after settings.approval_time (1d), before it would escalate`,
      );
    },
  );
});
