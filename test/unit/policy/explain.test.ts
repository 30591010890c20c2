// policy:explain's reasoning on the demo organization: which tools each agent sees and, for each
// hidden one, why, from the listing rule tools/list follows (so the explanation and the listing
// can never disagree).
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { type GatewaySnapshot, loadSnapshot } from '../../../shared/control-plane/snapshot.js';
import {
  type AgentExplanation,
  type ExplainContext,
  explainAgent,
  explainOneTool,
  type ToolExplanation,
} from '../../../shared/policy/explain.js';
import { anAgent } from '../../support/agents.js';
import { demoAddresses } from '../../support/demo-environment.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';
import { toolNamed } from './policy-fixtures.js';

const procurement = anAgent('procurement-agent', ['procurement']);
const support = anAgent('support-agent', ['support'], 'customer-1042');
const examples = new URL('../../../examples/', import.meta.url);

/** The demo organization, its configuration and policies edited by `edit`. */
const demo = async (
  edit: { config?: (text: string) => string; cedar?: (text: string) => string } = {},
): Promise<GatewaySnapshot> => {
  const read = (path: string) => readFile(new URL(path, examples), 'utf8');
  const config = (edit.config ?? ((text) => text))(await read('gateway.config.yaml'));
  const cedar = (edit.cedar ?? ((text) => text))(await read('policies/demo.cedar'));
  return snapshotOf(config, {
    files: { 'erp/openapi.yaml': await read('erp/openapi.yaml'), 'policies/demo.cedar': cedar },
    file: 'examples/gateway.config.yaml',
    environment: demoAddresses,
  });
};

const contextOf = (snapshot: GatewaySnapshot): ExplainContext => ({
  snapshot,
  configFile: 'examples/gateway.config.yaml',
  undiscovered: new Map([['reference', 'not asked: --offline']]),
});

const toolIn = (explanation: AgentExplanation, name: string): ToolExplanation => {
  const found = explanation.tools.find((tool) => tool.tool === name);
  if (found === undefined) throw new Error(`no tool ${name} in the explanation`);
  return found;
};

let snapshot: GatewaySnapshot;
beforeAll(async () => {
  snapshot = await demo();
});

describe('which tools an agent sees', () => {
  it(
    verifies(['ops.policy-explain', 'policy.listing'], 'agrees with the listing rule of tools/list, tool by tool'),
    () => {
      for (const agent of [procurement, support]) {
        const explained = explainAgent(contextOf(snapshot), agent);
        const visible = explained.tools.filter((tool) => tool.visible).map((tool) => tool.tool);
        expect(visible).toEqual(
          snapshot.catalog.tools.filter((tool) => snapshot.policy.isListed(agent, tool)).map((tool) => tool.name),
        );
        // Every tool of the configuration is accounted for, turned-off ones included.
        expect(explained.tools).toHaveLength(snapshot.catalog.tools.length + snapshot.catalog.disabled.length);
      }
    },
  );

  it(
    verifies('ops.policy-explain', 'shows procurement a tool support cannot see, saying the permits are for others'),
    () => {
      const forProcurement = toolIn(explainAgent(contextOf(snapshot), procurement), 'erp.purchase_orders.create');
      const forSupport = toolIn(explainAgent(contextOf(snapshot), support), 'erp.purchase_orders.create');
      expect(forProcurement).toMatchObject({ visible: true, hidden: null, depends_on_arguments: true });
      expect(forSupport).toMatchObject({ visible: false, hidden: 'no_permit', outcomes: [] });
      expect(forSupport.summary).toBe(
        'no permit applies to support-agent: the permits that mention it (small-purchase-orders (examples/policies/demo.cedar:7), large-purchase-orders (examples/policies/demo.cedar:12), high-stakes-purchase-orders (examples/policies/demo.cedar:23)) are for other agents or groups',
      );
    },
  );

  it(
    verifies('ops.policy-explain', 'names the decisions the arguments can get, and the policies that make them'),
    () => {
      const tool = toolIn(explainAgent(contextOf(snapshot), procurement), 'erp.purchase_orders.create');
      expect(
        tool.outcomes.map((outcome) => [outcome.decision, outcome.words, outcome.policies.map((p) => p.name)]),
      ).toEqual([
        ['run', 'runs at once', ['small-purchase-orders']],
        ['hold', 'staff approval by finance', ['large-purchase-orders']],
        [
          'hold',
          'staff approval by 2 of finance (escalates to operations after 4h; sign-in within 5m)',
          ['high-stakes-purchase-orders'],
        ],
        ['deny', 'refused by a forbid', ['positive-amounts']],
      ]);
      const refunds = toolIn(explainAgent(contextOf(snapshot), support), 'erp.refunds.create');
      expect(refunds.outcomes.map((outcome) => outcome.words)).toEqual([
        'customer confirmation',
        'customer confirmation, then staff approval by finance',
        'refused by a forbid',
      ]);
      const echo = toolIn(explainAgent(contextOf(snapshot), support), 'everything.echo');
      expect(echo).toMatchObject({ visible: true, depends_on_arguments: false });
      expect(echo.summary).toBe('runs at once, by demo-tools (examples/policies/demo.cedar:69)');
    },
  );

  it(verifies('ops.policy-explain', 'says a turned-off tool is turned off in the configuration'), () => {
    const tool = toolIn(explainAgent(contextOf(snapshot), procurement), 'everything.get-env');
    expect(tool).toMatchObject({ visible: false, hidden: 'disabled' });
    expect(tool.summary).toBe('turned off in the configuration (systems[1].disabled_tools)');
  });

  it(
    verifies(
      ['ops.policy-explain', 'catalog.enabled-tools'],
      'says a tool no enabled_tools pattern matches is turned off there',
    ),
    async () => {
      const edited = await demo({
        config: (text) =>
          text.replace(
            '    amount_fields: [amount]\n    operations:',
            '    amount_fields: [amount]\n    enabled_tools: [erp.purchase_orders.*, erp.shipments.*]\n    operations:',
          ),
      });
      const tool = toolIn(explainAgent(contextOf(edited), procurement), 'erp.vendors.get');
      expect(tool).toMatchObject({ visible: false, hidden: 'disabled' });
      expect(tool.summary).toBe('turned off in the configuration (systems[0].enabled_tools)');
      expect(toolIn(explainAgent(contextOf(edited), procurement), 'erp.purchase_orders.get').visible).toBe(true);
    },
  );

  it(verifies('ops.policy-explain', 'says a forbid always holds, naming it and its line'), () => {
    for (const agent of [procurement, support]) {
      const tool = toolIn(explainAgent(contextOf(snapshot), agent), 'erp.vendors.delete');
      expect(tool).toMatchObject({ visible: false, hidden: 'forbidden' });
      expect(tool.summary).toBe(
        'a forbid always holds for this agent: no-vendor-deletion (examples/policies/demo.cedar:65)',
      );
    }
  });

  it(verifies('ops.policy-explain', 'says no permit mentions a tool no policy names'), async () => {
    // The forbid on deleting vendors removed: no policy is left that names the tool at all.
    const edited = await demo({
      cedar: (text) => text.replace(/@id\("no-vendor-deletion"\)\nforbid[^;]*;/, ''),
    });
    const tool = toolIn(explainAgent(contextOf(edited), procurement), 'erp.vendors.delete');
    expect(tool).toMatchObject({ visible: false, hidden: 'no_permit', policies: [] });
    expect(tool.summary).toBe('no permit mentions this tool, for any agent');
  });

  it(verifies('ops.policy-explain', 'says when no arguments could satisfy the conditions'), async () => {
    // Support may order only negative amounts, which positive-amounts always refuses.
    const edited = await demo({
      cedar: (text) =>
        `${text}\n@id("negative-orders")\npermit (principal in Group::"support", action == Action::"erp.purchase_orders.create", resource)\nwhen { context.arguments.amount.lessThan(decimal("0.0")) };\n`,
    });
    const tool = toolIn(explainAgent(contextOf(edited), support), 'erp.purchase_orders.create');
    expect(tool).toMatchObject({ visible: false, hidden: 'no_arguments' });
    expect(tool.summary).toContain('no arguments could satisfy the conditions of the policies that mention it');
    expect(tool.summary).toContain('negative-orders');
    expect(tool.summary).toContain('positive-amounts');
    expect(edited.policy.isListed(support, toolNamed(edited, 'erp.purchase_orders.create'))).toBe(false);
  });

  it(verifies('ops.policy-explain', "says an MCP system's tools are unknown until its server lists them"), () => {
    const explained = explainAgent(contextOf(snapshot), procurement);
    expect(explained.undiscovered).toEqual([
      {
        system: 'reference',
        summary:
          'the tools of reference are not known, so they are hidden: its MCP server has not listed them (not asked: --offline)',
      },
    ]);
    expect(explainOneTool(contextOf(snapshot), procurement, 'reference.echo')).toMatchObject({
      kind: 'undiscovered',
      system: 'reference',
    });
    expect(explainOneTool(contextOf(snapshot), procurement, 'erp.nothing')).toEqual({ kind: 'unknown' });
  });

  it(
    verifies('ops.policy-explain', "says an MCP server's tools are withdrawn, and reads the discovered ones by policy"),
    async () => {
      const read = (path: string) => readFile(new URL(path, examples), 'utf8');
      const specs = ['echo', 'add'].map((name) => ({
        name,
        inputSchema: { type: 'object' },
        access: name === 'echo' ? ('read' as const) : null,
        configPath: [],
        source: 'tools/list of reference',
      }));
      const files: Record<string, string> = {
        'erp/openapi.yaml': await read('erp/openapi.yaml'),
        'policies/demo.cedar': await read('policies/demo.cedar'),
      };
      const load = async (withdrawn: ReadonlySet<string>) => {
        const outcome = await loadSnapshot({
          text: await read('gateway.config.yaml'),
          file: 'examples/gateway.config.yaml',
          environment: demoAddresses,
          files: { read: async (path) => files[path] },
          discovered: new Map([['reference', specs]]),
          withdrawn,
        });
        if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
        return { ...contextOf(outcome.snapshot), undiscovered: new Map() };
      };
      const offered = explainAgent(await load(new Set()), procurement);
      expect(toolIn(offered, 'reference.echo').summary).toBe(
        'runs at once, by reference-reads (examples/policies/demo.cedar:80)',
      );
      expect(toolIn(offered, 'reference.add').summary).toBe(
        'staff approval by operations, by reference-writes (examples/policies/demo.cedar:85)',
      );
      const withdrawn = explainAgent(await load(new Set(['reference'])), procurement);
      expect(toolIn(withdrawn, 'reference.echo')).toMatchObject({
        visible: false,
        hidden: 'withdrawn',
        summary: 'withdrawn: the MCP server of reference has not answered tools/list within allowed_staleness',
      });
    },
  );
});
