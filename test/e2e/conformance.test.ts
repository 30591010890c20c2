// The official MCP conformance suite against the running local runtime, for the scenarios that
// fit a gateway, in both revisions. The suite sends no credentials, so the runtime maps
// unauthenticated requests to the demo procurement agent (a loopback-only testing setting).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

const scenarios = {
  '2025-11-25': ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'],
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'http-header-validation',
    'caching',
    'dns-rebinding-protection',
    // The tasks extension's scenarios whose checks need no fixture tools (see baseline.yml); they sit
    // off the spec timeline, so the suite runs them only when forced.
    'tasks-capability-negotiation',
    'tasks-dispatch-and-envelope',
  ],
} as const;

let runtime: RuntimeProcess;
let results: Awaited<ReturnType<typeof temporaryFolder>>;
beforeAll(async () => {
  runtime = await startRuntimeProcess(['--memory', '--anonymous-agent', 'procurement-agent']);
  results = await temporaryFolder('gateway-conformance-');
});
afterAll(async () => {
  await runtime?.stop();
  await results?.remove();
});

const runScenario = (scenario: string, specVersion: string) =>
  runProcess(
    process.execPath,
    [
      projectPath('node_modules/@modelcontextprotocol/conformance/dist/index.js'),
      'server',
      '--url',
      runtime.mcpUrl,
      '--scenario',
      scenario,
      '--spec-version',
      specVersion,
      '--expected-failures',
      projectPath('test/conformance/baseline.yml'),
      '--output-dir',
      results.path,
      ...(scenario.startsWith('tasks-') ? ['--force'] : []),
    ],
    { cwd: projectPath(), env: { ...process.env, NO_COLOR: '1' } },
  );

describe.each(Object.entries(scenarios))('MCP conformance, revision %s', (specVersion, names) => {
  it.each([...names])(verifies('mcp.conformance', `passes %s (${specVersion})`), async (scenario) => {
    const { code, output } = await runScenario(scenario, specVersion);
    expect(output).toMatch(/Passed: \d+\/\d+/);
    expect(code, output).toBe(0);
  });
});
