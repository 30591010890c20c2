// The deploy walkthrough (docs/deploy.md) against what ships: every stack output it reads exists
// in the synthesized stack, every context value it passes is one the CDK app reads, and every
// option it gives the project's commands is one they take.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { synthesize } from './synthesis.js';

const walkthrough = readFileSync(projectPath('docs/deploy.md'), 'utf8');
/** The synthesized stack's output names, synthesized once for the file. */
let synthesizedOutputs: string[] | undefined;
const stackOutputs = (): string[] => {
  synthesizedOutputs ??= Object.keys(synthesize().template.toJSON().Outputs ?? {});
  return synthesizedOutputs;
};
const matches = (pattern: RegExp): string[] => [...new Set([...walkthrough.matchAll(pattern)].map((m) => m[1] ?? ''))];

describe('the deploy walkthrough', () => {
  it(verifies('aws.deploy-walkthrough', 'reads only outputs the stack has'), () => {
    const outputs = stackOutputs();
    const read = matches(/(?<!-)output ([A-Z][A-Za-z]+)/g);
    expect(read.length).toBeGreaterThan(10);
    expect(read.filter((name) => !outputs.includes(name))).toEqual([]);
  });

  it(verifies('deploy.probe-kit-outputs', 'the probe kit reads only outputs the stack has'), () => {
    const outputs = stackOutputs();
    const kit = readFileSync(projectPath('scripts/test-deployed.ts'), 'utf8');
    const read = [...kit.matchAll(/outputs\.([A-Za-z]+)/g)].map((m) => m[1]);
    expect(read).toEqual(['McpUrl', 'AgentTokenUrl', 'AgentScope']);
    expect(read.filter((name) => name === undefined || !outputs.includes(name))).toEqual([]);
  });

  it(verifies('aws.deploy-walkthrough', 'passes only context values the app reads'), () => {
    const app = readFileSync(projectPath('infra/app.ts'), 'utf8');
    const given = matches(/-c ([A-Za-z]+)=/g);
    expect(given.length).toBeGreaterThan(0);
    expect(given.filter((name) => !app.includes(`'${name}'`))).toEqual([]);
  });

  it(verifies('aws.deploy-walkthrough', 'gives each npm command only options it takes'), () => {
    for (const [script, command] of [
      ['scripts/config-push.ts', 'config:push'],
      ['scripts/config-check.ts', 'config:check'],
      ['scripts/test-deployed.ts', 'test:deployed'],
    ] as const) {
      const source = readFileSync(projectPath(script), 'utf8');
      const commands = walkthrough.split('npm run ').filter((part) => part.startsWith(`${command} `));
      expect(commands.length, command).toBeGreaterThan(0);
      const options = commands.flatMap((part) =>
        [...(part.split('\n\n')[0] ?? '').matchAll(/ --([a-z-]+)/g)].map((m) => m[1]),
      );
      expect(
        options.filter((option) => !source.includes(`'${option}'`) && !source.includes(`${option}:`)),
        command,
      ).toEqual([]);
    }
  });
});
