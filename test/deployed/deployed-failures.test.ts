// The harness fails clearly when what ships and what the template says part ways: a bundle whose
// handler is renamed, and a template that no longer declares a variable the function reads. Each
// runs a copy of the synthesized stack changed in that one way.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { type Assembly, deployedAssembly } from './assembly.js';
import { agentAuthorization, mcpHeaders, openChannel } from './organization.js';
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

/** Takes a variable out of a function's environment in a template (a copy, to change). */
const dropVariable = (template: Assembly['template'], construct: string, name: string) => {
  const id = Object.keys(template.Resources).find((logicalId) => logicalId.startsWith(`${construct}Function`));
  const environment = template.Resources[id ?? '']?.Properties.Environment;
  const variables =
    typeof environment === 'object' && environment !== null && 'Variables' in environment
      ? environment.Variables
      : undefined;
  if (typeof variables !== 'object' || variables === null || !(name in variables))
    throw new Error(`The ${construct} function no longer declares ${name}.`);
  Reflect.deleteProperty(variables, name);
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

  it(
    verifies(
      ['deployed.failures-reported', 'deployed.call-tool-channel'],
      'reports a variable the template no longer declares, on the HTTP API and on the WebSocket API',
    ),
    async () => {
      const changed: Assembly = { ...assembly, template: structuredClone(assembly.template) };
      dropVariable(changed.template, 'Mcp', 'CONFIG_TABLE');
      dropVariable(changed.template, 'CallToolSocket', 'CONNECTIONS_URL');
      const started = await startDeployedStack(changed);
      stack = started;
      const answer = await listTools(started);
      expect(answer.status).toBe(500);
      const said = `${answer.functionError?.message ?? ''} ${started.functions.get(functionId(started, 'Mcp'))?.logs() ?? ''}`;
      expect(said).toContain('CONFIG_TABLE');
      // The channel function fails at $connect: API Gateway's 500 to the handshake, the cause kept.
      const opened = await openChannel(
        started.outputs.CallToolWebSocketUrl ?? '',
        await agentAuthorization(started),
        '{}',
      );
      expect(opened).toEqual({ status: 500 });
      expect(started.socketFailures.map((failure) => failure.message).join('\n')).toMatch(
        new RegExp(`^${functionId(started, 'CallToolSocket')} failed: .*CONNECTIONS_URL`),
      );
    },
  );
});
