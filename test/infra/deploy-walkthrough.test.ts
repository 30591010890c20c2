// The deploy walkthrough (docs/deploy.md) against what ships: every stack output it reads exists
// in the synthesized stack, every context value it passes is one the CDK app reads, and every
// option it gives the project's commands is one they take.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { synthesize } from './synthesis.js';

const walkthrough = readFileSync(projectPath('docs/deploy.md'), 'utf8');
const matches = (pattern: RegExp): string[] => [...new Set([...walkthrough.matchAll(pattern)].map((m) => m[1] ?? ''))];

describe('the deploy walkthrough', () => {
  it(verifies('aws.deploy-walkthrough', 'reads only outputs the stack has'), () => {
    const outputs = Object.keys(synthesize().template.toJSON().Outputs ?? {});
    const read = matches(/(?<!-)output ([A-Z][A-Za-z]+)/g);
    expect(read.length).toBeGreaterThan(10);
    expect(read.filter((name) => !outputs.includes(name))).toEqual([]);
  });

  it(verifies('aws.deploy-walkthrough', 'passes only context values the app reads'), () => {
    const app = readFileSync(projectPath('infra/app.ts'), 'utf8');
    const given = matches(/-c ([A-Za-z]+)=/g);
    expect(given.length).toBeGreaterThan(0);
    expect(given.filter((name) => !app.includes(`'${name}'`))).toEqual([]);
  });

  it(verifies('aws.deploy-walkthrough', 'gives config:push and config:check only options they take'), () => {
    for (const [script, command] of [
      ['scripts/config-push.ts', 'config:push'],
      ['scripts/config-check.ts', 'config:check'],
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
