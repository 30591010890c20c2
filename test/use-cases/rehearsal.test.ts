// policy:test rehearses what tools/call decides: every case of the demo's case file, rehearsed
// in-process, gets the decision the real tools/call use-case records for the same call (its
// refusal code, or its decision record's effect, reason, human step and policies).
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { readArguments, readParsedArguments } from '../../shared/arguments/strict-json.js';
import { readCaseFile } from '../../shared/policy/case-file.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { rehearseCase } from '../../shared/use-cases/rehearse-case.js';
import { verifies } from '../support/requirements.js';
import { useCaseBed } from '../support/use-case-bed.js';
import { loadDemo } from '../unit/policy/policy-fixtures.js';

describe('the demo cases against tools/call', () => {
  it(verifies('ops.policy-test', 'rehearses each demo case exactly as tools/call decides and records it'), async () => {
    const file = readCaseFile(await readFile(new URL('../../examples/policy-cases.yaml', import.meta.url), 'utf8'));
    if (!file.ok) throw new Error(JSON.stringify(file.problems));
    const snapshot = await loadDemo();
    const bed = await useCaseBed({ snapshot });
    const deps = {
      ...bed.deps,
      toolServers: { call: async () => ({ kind: 'result', result: { content: [] } }) as const },
    };
    const context = { snapshot, configFile: 'gateway.config.yaml', undiscovered: new Map<string, string>() };
    const kinds = new Set<string>();
    for (const testCase of file.cases) {
      const configured = snapshot.config.agents.find((agent) => agent.id === testCase.agent);
      if (configured === undefined) throw new Error(`no agent ${testCase.agent}`);
      const agent = { id: configured.id, groups: configured.groups, customerId: configured.customer };
      const args =
        typeof testCase.arguments === 'string'
          ? readArguments(testCase.arguments, [])
          : readParsedArguments(testCase.arguments ?? {});
      if (args === null) throw new Error('not JSON');
      const answered = await callTool(deps, agent, testCase.tool, args);
      const execution = await bed.record(answered.execution_id ?? '');
      const rehearsed = rehearseCase(context, testCase);
      expect(rehearsed.failures, testCase.name).toEqual([]);
      const got = rehearsed.got;
      if (got === null) throw new Error('not rehearsed');
      kinds.add(got.reason ?? got.decision);
      if (got.reason === 'unknown_tool' || got.reason === 'invalid_arguments') {
        expect([execution.status, execution.code], testCase.name).toEqual(['denied', got.reason]);
        expect(execution.input_errors ?? null, testCase.name).toEqual(got.input_errors);
        continue;
      }
      const expectedStatus = { run: 'succeeded', hold: 'pending_approval', deny: 'denied' }[got.decision];
      expect(execution.status, testCase.name).toBe(expectedStatus);
      expect(execution.decision, testCase.name).toMatchObject({
        effect: got.decision === 'deny' ? 'deny' : 'allow',
        reason: got.reason,
        step: got.step,
        determining: got.policies.map((policy) => ({ name: policy.name })),
      });
    }
    // The demo's cases cover every way a call goes.
    expect([...kinds].sort()).toEqual(['forbidden', 'hold', 'invalid_arguments', 'run', 'unknown_tool']);
  });
});
