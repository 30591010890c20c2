// The tables are granted by purpose: each function's grant is a method of the table construct named
// for what the function does with the table, so the stack's composition lists no DynamoDB action.
// (What each grant allows, function by function, is checked on the synthesized stack in
// approvals-stack.test.ts and stack.test.ts.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { GatewayTable } from '../../infra/constructs/gateway-table.js';
import { projectPath } from '../../infra/paths.js';
import { configTable, executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { verifies } from '../support/requirements.js';

const sources = (folder: string): string[] =>
  readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return entry === 'local' ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });

describe('grants on the tables', () => {
  it(
    verifies('code.table-grants-by-purpose', 'names DynamoDB actions in the table construct only, never in the stack'),
    () => {
      const naming = sources(projectPath('infra'))
        .filter((path) => /['"`]dynamodb:/.test(readFileSync(path, 'utf8')))
        .map((path) => relative(projectPath(), path));
      expect(naming).toEqual(['infra/constructs/gateway-table.ts']);
    },
  );

  it(
    verifies('code.table-grants-by-purpose', 'refuses a grant on an index the table does not define, naming both'),
    () => {
      const stack = new Stack(new App(), 'Grants');
      const configuration = new GatewayTable(stack, 'Config', { definition: configTable });
      const executions = new GatewayTable(stack, 'Executions', { definition: executionsTable });
      const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
      expect(() => configuration.grantReconcile(role)).toThrow('The config table defines no open-by-deadline index.');
      expect(() => executions.grantDecide(role)).not.toThrow();
    },
  );
});
