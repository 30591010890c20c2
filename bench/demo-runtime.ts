// The demo organization as the bench runs it, in a copy of its own: with its agent's limits out of
// the way, or with held calls that expire after one second; and the local runtime started on it in
// this process, in memory, against the bench's demo ERP.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalOptions } from '../infra/local/options.js';
import { type LocalRuntime, startLocalRuntime } from '../infra/local/runtime.js';
import { projectPath } from '../infra/paths.js';

export const startRuntime = (config: string, erpUrl: string): Promise<LocalRuntime> =>
  startLocalRuntime(
    LocalOptions.parse({ port: '0', grpcPort: '0', demoToolsPort: '0', memory: true, demoErp: false, config }),
    {
      // The demo MCP server is not run here; nothing the benchmark calls is on it.
      variables: { DEMO_ERP_URL: erpUrl, DEMO_MCP_URL: 'http://127.0.0.1:9/mcp' },
      logLevel: 'ERROR',
    },
  );

/** How many held calls the bench's agent may have waiting at once (the held-reply floor's too). */
export const benchPendingCalls = 1000;

/**
 * The demo organization with its one agent's limits (settings.limits) raised out of the way: the
 * bench measures the gateway's own cost at full speed, not the limits.
 */
export const unlimitedDemo = async (): Promise<{ config: string; remove: () => Promise<void> }> => {
  const folder = await mkdtemp(join(tmpdir(), 'gateway-bench-org-'));
  const remove = () => rm(folder, { recursive: true, force: true });
  try {
    await cp(projectPath('examples'), folder, { recursive: true });
    const config = join(folder, 'gateway.config.yaml');
    const text = await readFile(config, 'utf8');
    if (!text.includes('\nsettings:\n')) throw new Error('the demo configuration has no settings block');
    const limits =
      '  limits: { concurrent_requests: 10000, requests_per_second: 100000, burst: 100000, ' +
      `pending_calls: ${benchPendingCalls} }\n`;
    await writeFile(config, text.replace('\nsettings:\n', `\nsettings:\n${limits}`));
    return { config, remove };
  } catch (error) {
    await remove();
    throw error;
  }
};

/** A second runtime whose held calls expire after one second, on the same ERP. */
export const startExpiringRuntime = async (
  erpUrl: string,
): Promise<{ runtime: LocalRuntime; stop(): Promise<void> }> => {
  const folder = await mkdtemp(join(tmpdir(), 'gateway-bench-org-'));
  try {
    await cp(projectPath('examples'), folder, { recursive: true });
    const config = join(folder, 'gateway.config.yaml');
    const text = await readFile(config, 'utf8');
    if (!text.includes('approval_time: 24h')) throw new Error('the demo configuration has no approval_time: 24h');
    await writeFile(config, text.replace('approval_time: 24h', 'approval_time: 1s'));
    const expiring = await startRuntime(config, erpUrl);
    return {
      runtime: expiring,
      stop: async () => {
        await expiring.stop();
        await rm(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
};
