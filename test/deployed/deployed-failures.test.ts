// The harness fails clearly when what ships and what the template says part ways: a bundle whose
// handler is renamed, and a template that no longer declares a variable the function reads. Each
// runs a copy of the synthesized stack changed in that one way.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { type Assembly, deployedAssembly } from './assembly.js';
import { agentAuthorization, mcpHeaders } from './organization.js';
import { type DeployedStack, functionId, startDeployedStack } from './stack.js';

const listTools = async (stack: DeployedStack) =>
  stack.http({
    method: 'POST',
    path: '/mcp',
    headers: { ...mcpHeaders, ...(await agentAuthorization(stack)) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

/** A copy of a function's bundle folder with its entry changed; the assembly serving the copy. */
const withChangedBundle = async (
  assembly: Assembly,
  construct: string,
  folder: string,
  change: (source: string) => string,
): Promise<Assembly> => {
  const resource = Object.entries(assembly.template.Resources).find(([id]) =>
    id.startsWith(`${construct}Function`),
  )?.[1];
  const code = resource?.Properties.Code;
  const objectKey = typeof code === 'object' && code !== null && 'S3Key' in code ? String(code.S3Key) : '';
  const bundle = join(folder, 'asset');
  await cp(assembly.assetPath(objectKey), bundle, { recursive: true });
  const entry = join(bundle, 'index.mjs');
  await writeFile(entry, change(await readFile(entry, 'utf8')));
  return { ...assembly, assetPath: (key) => (key === objectKey ? bundle : assembly.assetPath(key)) };
};

/** The MCP function's resource in a copy of the template, to change. */
const mcpResource = (assembly: Assembly) => {
  const id = Object.keys(assembly.template.Resources).find((logicalId) => logicalId.startsWith('McpFunction'));
  const resource = id === undefined ? undefined : assembly.template.Resources[id];
  if (resource === undefined) throw new Error('The template has no MCP function.');
  return resource;
};

describe('the harness, when what ships and the template part ways', () => {
  let assembly: Assembly;
  let stack: DeployedStack | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    assembly = await deployedAssembly();
  });
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it(
    verifies('deployed.failures-reported', "reports a bundle that no longer exports the template's handler"),
    async () => {
      const folder = await temporaryFolder('gateway-renamed-');
      cleanups.push(() => folder.remove());
      const renamed = await withChangedBundle(assembly, 'Mcp', folder.path, (source) => {
        expect(source).toMatch(/as handler\}/);
        return source.replace(/as handler\}/, 'as main}');
      });
      stack = await startDeployedStack(renamed);
      const answer = await listTools(stack);
      expect(answer.status).toBe(500);
      expect(answer.functionError?.message).toBe(
        `${functionId(stack, 'Mcp')} failed: Runtime.HandlerNotFound: index.handler is undefined or not exported`,
      );
    },
  );

  it(
    verifies('deployed.agent-authorizer', "answers API Gateway's 403 when the authorizer says isAuthorized false"),
    async () => {
      const folder = await temporaryFolder('gateway-denying-');
      cleanups.push(() => folder.remove());
      // The HTTP API branch of the authorizer, made to deny every request.
      const denying = await withChangedBundle(assembly, 'AgentAuthorizer', folder.path, (source) => {
        expect(source).toContain('isAuthorized:!0');
        return source.replace('isAuthorized:!0', 'isAuthorized:!1');
      });
      const started = await startDeployedStack(denying);
      stack = started;
      const answer = await listTools(started);
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body)).toEqual({ message: 'Forbidden' });
      // The request never reached the MCP function.
      expect(started.calls.filter((call) => call.caller === functionId(started, 'Mcp'))).toEqual([]);
    },
  );

  it(verifies('deployed.failures-reported', 'reports a variable the template no longer declares'), async () => {
    const copy = structuredClone(assembly.template);
    const changed: Assembly = { ...assembly, template: copy };
    const environment = mcpResource(changed).Properties.Environment;
    const variables =
      typeof environment === 'object' && environment !== null && 'Variables' in environment
        ? environment.Variables
        : undefined;
    if (typeof variables !== 'object' || variables === null || !('CONFIG_TABLE' in variables))
      throw new Error('The MCP function no longer declares CONFIG_TABLE.');
    Reflect.deleteProperty(variables, 'CONFIG_TABLE');
    stack = await startDeployedStack(changed);
    const answer = await listTools(stack);
    expect(answer.status).toBe(500);
    const said = `${answer.functionError?.message ?? ''} ${stack.functions.get(functionId(stack, 'Mcp'))?.logs() ?? ''}`;
    expect(said).toContain('CONFIG_TABLE');
  });
});
