// The configuration as the policy tools (policy:explain, policy:test) read it: loaded exactly as
// config:check loads it, MCP servers asked for their tools unless offline, and for each MCP
// system whose tools stay unknown, why.
import { formatProblem } from '../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import { loadSnapshotFromFile } from './config-files.js';
import { discoverMcpTools } from './mcp-discovery.js';

export type ToolSnapshot =
  | {
      readonly ok: true;
      readonly snapshot: GatewaySnapshot;
      /** MCP systems whose tools are not known, with why. */
      readonly undiscovered: ReadonlyMap<string, string>;
    }
  | { readonly ok: false; readonly message: string };

export const loadToolSnapshot = async (
  file: string,
  environment: Readonly<Record<string, string | undefined>>,
  offline: boolean,
): Promise<ToolSnapshot> => {
  const discovery = offline ? null : await discoverMcpTools(file, environment);
  const outcome = await loadSnapshotFromFile(file, environment, { unsetVariables: 'placeholder' }, discovery?.offered);
  if (!outcome.ok) {
    const problems = outcome.problems.map((problem) => `  ${formatProblem(problem)}`).join('\n');
    return { ok: false, message: `${file} is not valid (see npm run config:check):\n${problems}` };
  }
  const undiscovered = new Map<string, string>();
  for (const system of outcome.snapshot.config.systems) {
    if (system.kind !== 'mcp' || discovery?.catalogs.has(system.key) === true) continue;
    undiscovered.set(
      system.key,
      discovery === null ? 'not asked: --offline' : (discovery.failures.get(system.key) ?? 'the server did not answer'),
    );
  }
  return { ok: true, snapshot: outcome.snapshot, undiscovered };
};
