// The /tool/call-tool channel as a use-case, on the in-memory store with the real loader and Cedar
// policy: params in, one frame out. Its own refusals are JSON-RPC errors (frame 1); everything the
// call itself decides is the result object exactly as MCP's tools/call answers it (frame 0).
import { describe, expect, it } from 'vitest';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import {
  answerChannelBytes,
  channelParamsText,
  maxChannelParamsBytes,
  paramsMissingFrame,
} from '../../shared/edge/call-tool/serve.js';
import { toCallToolResult } from '../../shared/edge/mcp/tool-result.js';
import { limitsNow } from '../../shared/limits/agent-limits.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { ResultObject } from '../../shared/result.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { decodeFrame, type Frame } from '../../shared/wire/call-tool-frame.js';
import { anAgent } from '../support/agents.js';
import { verifies } from '../support/requirements.js';
import { argumentsOf, procurementAgent, tools, type UseCaseBed, useCaseBed } from '../support/use-case-bed.js';

const serve = async (
  bed: UseCaseBed,
  text: string,
  options: { agent?: AgentIdentity; gate?: RequestGate | null; deps?: UseCaseBed['deps'] } = {},
): Promise<Frame> =>
  decodeFrame(
    (
      await answerChannelBytes(
        options.deps ?? bed.deps,
        { gate: options.gate ?? null },
        { agent: options.agent ?? procurementAgent, bytes: Buffer.from(text, 'utf8'), traceparent: null },
      )
    ).frame,
  );

const errorOf = (frame: Frame) => {
  if (frame.kind !== 'error') throw new Error(`expected an error frame, got ${JSON.stringify(frame)}`);
  return frame.error;
};

/** The frame's result as MCP shapes it, and its result object. */
const resultOf = (frame: Frame) => {
  if (frame.kind !== 'result') throw new Error(`expected a result frame, got ${JSON.stringify(frame)}`);
  const { result } = frame;
  expect(Object.keys(result).sort()).toEqual(['content', 'isError', 'structuredContent']);
  const object = ResultObject.parse(result.structuredContent);
  expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(object) }]);
  return { result, object };
};

const params = (name: string, args: unknown) => JSON.stringify({ name, arguments: args });

const recordCount = async (bed: UseCaseBed, agent: AgentIdentity = procurementAgent) =>
  (await bed.store.listByAgent(agent.id)).items.length;

describe('params the channel cannot take', () => {
  it(verifies('channel.params', 'answers -32700 to params that are not JSON, and records nothing'), async () => {
    const bed = await useCaseBed();
    for (const text of ['', 'not json', '{"name":', '{"name":"x"} trailing', '\ufeff{"name":"x"}']) {
      const error = errorOf(await serve(bed, text));
      expect(error.code).toBe(-32700);
      expect(error.message).toMatch(/not JSON/);
    }
    expect(await recordCount(bed)).toBe(0);
  });

  it(verifies('channel.params', 'reads bytes that are not UTF-8 as no text at all'), () => {
    expect(channelParamsText(new Uint8Array([0x7b, 0xff, 0x7d]))).toBeNull();
    expect(channelParamsText(new Uint8Array([0xed, 0xa0, 0x80]))).toBeNull();
    expect(channelParamsText(new TextEncoder().encode('{"name":"é"}'))).toBe('{"name":"é"}');
  });

  it(
    verifies(
      'channel.params',
      'answers -32602 to params that are not an object with a string name and object arguments',
    ),
    async () => {
      const bed = await useCaseBed();
      const invalid = [
        '[]',
        '"erp.orders.list"',
        'null',
        '{}',
        '{"name":42}',
        '{"arguments":{}}',
        params(tools.list, []),
        params(tools.list, 'vendor=acme'),
        params(tools.list, null),
      ];
      for (const text of invalid) {
        const error = errorOf(await serve(bed, text));
        expect(error.code, text).toBe(-32602);
        expect(error.message).toMatch(/^Invalid params/);
      }
      expect(await recordCount(bed)).toBe(0);
    },
  );

  it(verifies('channel.params', 'answers -32600 to params over 256 KiB, counted in UTF-8 bytes'), async () => {
    const bed = await useCaseBed();
    // Each é is two bytes: the text is under the cap in characters and over it in bytes.
    const padding = 'é'.repeat(maxChannelParamsBytes / 2);
    const error = errorOf(await serve(bed, params(tools.list, { vendor: padding })));
    expect(error).toEqual({ code: -32600, message: `The params are larger than ${maxChannelParamsBytes} bytes.` });
    expect(await recordCount(bed)).toBe(0);
  });

  it(verifies('channel.params', 'says how long it waited for params that never came'), () => {
    expect(decodeFrame(paramsMissingFrame(250))).toEqual({
      kind: 'error',
      error: {
        code: -32600,
        message: 'No params arrived within 0.25 s: send the tools/call params as the first message.',
      },
    });
  });

  it(verifies('channel.robust', 'refuses params nested 100 000 deep without running out of stack'), async () => {
    const bed = await useCaseBed();
    const deep = `{"name":"${tools.list}","arguments":{"vendor":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    const frame = await serve(bed, deep);
    // Too deep to read is not JSON the gateway takes; either way nothing ran.
    if (frame.kind === 'error') expect(frame.error.code).toBe(-32700);
    else expect(resultOf(frame).object).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
    expect(bed.sent).toHaveLength(0);
  });
});

describe('a call on the channel is the tools/call use-case', () => {
  it(
    verifies('channel.same-call', 'runs a call the policy allows and answers the result object as MCP does'),
    async () => {
      const bed = await useCaseBed();
      const { result, object } = resultOf(await serve(bed, params(tools.create, { vendor: 'acme', amount: '250' })));
      expect(object).toMatchObject({ status: 'succeeded', code: null, result: { id: 'PO-1' } });
      expect(result.isError).toBe(false);
      expect(bed.sent).toHaveLength(1);
      const record = await bed.record(object.execution_id ?? '');
      expect(record).toMatchObject({ agent_id: procurementAgent.id, tool: tools.create, status: 'succeeded' });
      // The very shape MCP sends for that record.
      expect(result).toEqual({ ...toCallToolResult(object) });
    },
  );

  it(verifies('channel.same-call', 'holds a large order for approval, as MCP does'), async () => {
    const bed = await useCaseBed();
    const { object } = resultOf(await serve(bed, params(tools.create, { vendor: 'acme', amount: '1500' })));
    expect(object.status).toBe('pending_approval');
    expect(bed.sent).toHaveLength(0);
    expect(bed.started).toHaveLength(1);
  });

  it(
    verifies('channel.same-call', 'answers a tool the agent cannot see with denied / unknown_tool, exactly like MCP'),
    async () => {
      const bed = await useCaseBed();
      const outsider = anAgent('outsider-agent', ['support']);
      for (const name of [tools.create, 'erp.orders.delete', 'erp.orders.creat']) {
        const { result, object } = resultOf(await serve(bed, params(name, { vendor: 'acme' }), { agent: outsider }));
        expect(object).toMatchObject({ status: 'denied', code: 'unknown_tool' });
        expect(result.isError).toBe(true);
        const direct = await callTool(bed.deps, outsider, name, argumentsOf({ vendor: 'acme' }));
        expect({ ...object, execution_id: null }).toEqual({ ...direct, execution_id: null });
      }
      expect(bed.sent).toHaveLength(0);
    },
  );

  it(verifies('channel.same-call', "reads the arguments strictly from the message's own text"), async () => {
    const bed = await useCaseBed();
    const text = `{"name":"${tools.create}","arguments":{"vendor":"acme","amount":"5","amount":"5000"}}`;
    const { object } = resultOf(await serve(bed, text));
    expect(object).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
    expect(object.input_errors).toContainEqual(expect.objectContaining({ path: '/amount', code: 'duplicate_key' }));
    for (const hazard of ['{"vendor":"acme","amount":"5","__proto__":{}}', '{"vendor":"ac\\ud800me","amount":"5"}']) {
      const refused = resultOf(await serve(bed, `{"name":"${tools.create}","arguments":${hazard}}`)).object;
      expect(refused).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
      expect(refused.input_errors?.map((problem) => problem.code)).not.toContain('unknown_field');
    }
    expect(bed.sent).toHaveLength(0);
  });

  it(
    verifies('channel.same-call', "follows the agent's own call with get_execution_status, and no one else's"),
    async () => {
      const bed = await useCaseBed();
      const held = resultOf(await serve(bed, params(tools.create, { vendor: 'acme', amount: '1500' }))).object;
      const executionId = held.execution_id ?? '';
      const own = resultOf(await serve(bed, params('get_execution_status', { execution_id: executionId }))).object;
      expect(own).toMatchObject({ status: 'pending_approval', execution_id: executionId });
      const other = anAgent('other-agent', ['procurement']);
      const foreign = await serve(bed, params('get_execution_status', { execution_id: executionId }), { agent: other });
      const missing = await serve(
        bed,
        params('get_execution_status', { execution_id: '01890a5d-ac96-774b-bcce-b302099a8057' }),
        {
          agent: other,
        },
      );
      expect(resultOf(foreign).object).toMatchObject({ status: 'unknown', code: 'not_found' });
      expect(foreign).toEqual(missing);
    },
  );
});

describe('limits and faults', () => {
  it(
    verifies('channel.limits', 'counts every call against the per-agent gate and answers a refusal as frame 0 denied'),
    async () => {
      const bed = await useCaseBed();
      const gate = new RequestGate(bed.clock);
      const limits = await limitsNow(bed.deps.controlPlane, procurementAgent);
      // The agent's every place is taken (by /mcp requests, say): the channel is refused too.
      const held = Array.from({ length: limits.concurrentRequests }, () => gate.admit(procurementAgent.id, limits));
      const refused = resultOf(await serve(bed, params(tools.list, {}), { gate })).object;
      expect(refused).toMatchObject({ status: 'denied', code: 'concurrency_limited', execution_id: null });
      // Refused before the params are read: unreadable params get the same answer.
      expect(resultOf(await serve(bed, 'not json', { gate })).object.code).toBe('concurrency_limited');
      for (const admission of held) if (admission.kind === 'admitted') admission.release();
      expect(gate.inFlight(procurementAgent.id)).toBe(0);
      // The bucket is spent now (the clock stands still): the rate refuses.
      for (let spent = limits.concurrentRequests; spent < limits.burst; spent += 1) {
        const admission = gate.admit(procurementAgent.id, limits);
        if (admission.kind === 'admitted') admission.release();
      }
      const limited = resultOf(await serve(bed, params(tools.list, {}), { gate })).object;
      expect(limited).toMatchObject({ status: 'denied', code: 'rate_limited' });
      expect(bed.sent).toHaveLength(0);
      expect(await recordCount(bed)).toBe(0);
      // Another agent's allowance is its own.
      const other = anAgent('other-agent', ['procurement']);
      expect(resultOf(await serve(bed, params(tools.list, {}), { gate, agent: other })).object.status).toBe(
        'succeeded',
      );
    },
  );

  it(verifies('channel.limits', 'gives back its place in the gate when the call is done'), async () => {
    const bed = await useCaseBed();
    const gate = new RequestGate(bed.clock);
    await serve(bed, params(tools.list, {}), { gate });
    await serve(bed, '[]', { gate });
    expect(gate.inFlight(procurementAgent.id)).toBe(0);
  });

  it(verifies('channel.fault', "answers a fault in the store with -32603 in the gateway's own words"), async () => {
    const bed = await useCaseBed();
    const secret = 'ConditionalCheckFailed at table gateway-executions password=hunter2';
    const deps = {
      ...bed.deps,
      store: Object.assign(Object.create(bed.store) as typeof bed.store, {
        create: async () => {
          throw new Error(secret);
        },
      }),
    };
    const answer = await answerChannelBytes(
      deps,
      { gate: null },
      { agent: procurementAgent, bytes: Buffer.from(params(tools.list, {}), 'utf8'), traceparent: null },
    );
    const error = errorOf(decodeFrame(answer.frame));
    expect(error.code).toBe(-32603);
    expect(JSON.stringify(error)).not.toMatch(/hunter2|gateway-executions|Conditional/);
    expect(answer).toMatchObject({ tool: tools.list, outcome: { error: -32603 } });
    expect(bed.warnings).toContain('tools/call failed');
  });

  it(verifies('channel.robust', 'says which tool a call named and how it ended, for the log line'), async () => {
    const bed = await useCaseBed();
    const run = (text: string) =>
      answerChannelBytes(
        bed.deps,
        { gate: null },
        { agent: procurementAgent, bytes: Buffer.from(text, 'utf8'), traceparent: null },
      );
    expect(await run(params(tools.list, {}))).toMatchObject({
      tool: tools.list,
      outcome: { status: 'succeeded', code: null },
    });
    expect(await run('{')).toMatchObject({ tool: null, outcome: { error: -32700 } });
    expect(await run(params('x'.repeat(1000), {}))).toMatchObject({ tool: 'x'.repeat(200) });
  });
});
