// What `npm start` prints first: what a person needs to try it, in plain text.
import { describe, expect, it } from 'vitest';
import { type BannerFacts, banner } from '../../../infra/local/banner.js';
import { verifies } from '../../support/requirements.js';

const facts: BannerFacts = {
  baseUrl: 'http://127.0.0.1:8787',
  mcpUrl: 'http://127.0.0.1:8787/mcp',
  grpcAddress: '127.0.0.1:8789',
  dynamodbEndpoint: 'http://127.0.0.1:40001',
  stepFunctions: { endpoint: 'http://127.0.0.1:40002', stateMachineArn: 'arn:aws:states:local:0:stateMachine:x' },
  erpUrl: 'http://127.0.0.1:8788',
  demoToolsUrl: null,
  demoMcpUrl: null,
  configFile: 'examples/gateway.config.yaml',
  toolNames: () => ['erp.purchase_orders.create'],
  config: () => ({
    agents: [{ id: 'procurement-agent', token: 'demo-procurement-token', tokenFromEnvironment: false }],
    approvers: [
      {
        id: 'finance-approver',
        password: 'demo-finance-password',
        passwordFromEnvironment: false,
        groups: ['finance'],
      },
    ],
    customers: [{ id: 'customer-1042', password: 'demo-customer-password', passwordFromEnvironment: false }],
  }),
};

describe('the start banner', () => {
  it(
    verifies(
      'local.terminal-for-people',
      'prints the console link, the approvers and the customer sign-ins and the client configuration first, in plain text',
    ),
    () => {
      const lines = banner(facts, false).split('\n');
      const at = (text: string) => lines.findIndex((line) => line.includes(text));
      const endpoints = at('MCP endpoint');
      for (const first of [
        'http://127.0.0.1:8787/console',
        'finance-approver         demo-finance-password',
        'customer-1042            demo-customer-password',
        '"Authorization": "Bearer demo-procurement-token"',
      ]) {
        expect(at(first), first).toBeGreaterThan(0);
        expect(at(first), first).toBeLessThan(endpoints);
      }
      expect(lines.find((line) => line.includes('/console'))?.trim()).toBe('Console: http://127.0.0.1:8787/console');
    },
  );
});
