// `npm run policy:explain -- --agent <id> [--tool <name>]`: which tools an agent sees, and for
// each hidden one why (turned off, its MCP server not listed, or the policy's own reason: the
// rule tools/list follows). With --tool, the policies that mention the tool and the human step
// each decision would need. Exit 0; an unknown agent or tool, or bad options, exit 2; an invalid
// configuration exits 1.
import { defaultConfigFile } from '../infra/local/options.js';
import { loadToolSnapshot } from '../infra/local/tool-snapshot.js';
import {
  type AgentExplanation,
  agentWords,
  explainAgent,
  explainOneTool,
  type ToolExplanation,
} from '../shared/policy/explain.js';
import { dataFolderOf, readCommandLine, toolSnapshotOptions, toolSnapshotUsage } from './command-line.js';

const usage = `Usage: npm run policy:explain -- --agent <id> [--tool <name>] [--config <file>] [--offline] [--data-dir <dir>] [--json]

  --agent <id>     the agent, as the configuration's agents: name it
  --tool <name>    details for one tool: the policies that mention it and the human step it needs
${toolSnapshotUsage}`;

const options = { agent: { type: 'string' }, tool: { type: 'string' }, ...toolSnapshotOptions } as const;

const toolLines = (tool: ToolExplanation): string[] => {
  const lines = [`${tool.tool}: ${tool.visible ? 'visible' : 'hidden'}`];
  if (tool.outcomes.length > 1) {
    lines.push('  the decision depends on the arguments; some arguments get:');
    for (const outcome of tool.outcomes) {
      const policies = outcome.policies.map((policy) => `${policy.name} (${policy.at})`).join(', ');
      lines.push(`    ${outcome.decision} (${outcome.words})${policies.length > 0 ? `: ${policies}` : ''}`);
    }
  } else lines.push(`  ${tool.summary}`);
  lines.push(tool.policies.length > 0 ? '  policies that mention it (for any agent):' : '  no policy mentions it');
  for (const policy of tool.policies) lines.push(`    ${policy.effect} ${policy.name}  ${policy.at}`);
  return lines;
};

const agentLines = (explanation: AgentExplanation, header: string): string[] => {
  const visible = explanation.tools.filter((tool) => tool.visible);
  const hidden = explanation.tools.filter((tool) => !tool.visible);
  const width = Math.max(0, ...explanation.tools.map((tool) => tool.tool.length));
  const line = (tool: ToolExplanation) => `    ${tool.tool.padEnd(width)}  ${tool.summary}`;
  return [
    header,
    `  sees ${visible.length} of ${explanation.tools.length} tools${visible.length > 0 ? ':' : ''}`,
    ...visible.map(line),
    ...(hidden.length > 0 ? [`  hidden (${hidden.length}):`, ...hidden.map(line)] : []),
    ...(explanation.undiscovered.length > 0
      ? ['  not known:', ...explanation.undiscovered.map((system) => `    ${system.summary}`)]
      : []),
  ];
};

const run = async (): Promise<number> => {
  const parsed = readCommandLine(options, usage);
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  if (values.agent === undefined) {
    process.stderr.write(`--agent is required\n\n${usage}`);
    return 2;
  }
  const file = values.config ?? defaultConfigFile;
  const dataDir = dataFolderOf(values);
  const loaded = await loadToolSnapshot(file, process.env, values.offline === true, dataDir);
  if (!loaded.ok) {
    process.stderr.write(`${loaded.message}\n`);
    return 1;
  }
  const { snapshot } = loaded;
  const configured = snapshot.config.agents.find((agent) => agent.id === values.agent);
  if (configured === undefined) {
    const known = snapshot.config.agents.map((agent) => agent.id).join(', ');
    process.stderr.write(
      `unknown agent "${values.agent}": ${file} names ${known.length > 0 ? `these agents: ${known}` : 'no agents'}\n`,
    );
    return 2;
  }
  const agent = { id: configured.id, groups: configured.groups, customerId: configured.customer };
  const context = { snapshot, configFile: file, undiscovered: loaded.undiscovered };
  const write = (value: unknown, lines: string[]) =>
    process.stdout.write(values.json === true ? `${JSON.stringify(value, null, 2)}\n` : `${lines.join('\n')}\n`);
  if (values.tool === undefined) {
    const explanation = explainAgent(context, agent);
    write(explanation, [
      ...agentLines(explanation, `${agentWords(agent)}, configuration ${file} (version ${snapshot.version}):`),
      ...[...loaded.remembered].map(
        ([system, fetchedAt]) => `  ${system}: its tools as the running gateway last listed them (${fetchedAt})`,
      ),
    ]);
    return 0;
  }
  const one = explainOneTool(context, agent, values.tool);
  if (one.kind === 'unknown') {
    process.stderr.write(
      `unknown tool "${values.tool}": ${file} offers no such tool (npm run policy:explain -- --agent ${agent.id} lists them)\n`,
    );
    return 2;
  }
  const header = `for ${agentWords(agent)}:`;
  write(
    one,
    one.kind === 'tool' ? [header, ...toolLines(one.tool)] : [header, `${values.tool}: hidden`, `  ${one.summary}`],
  );
  return 0;
};

process.exitCode = await run();
