// What one agent's requests may cost the others: each request is charged its size against the
// agent's byte allowances before its body is read, a refused one is parsed only for its id (never
// read strictly), and arguments full of unknown fields are refused on those alone. The MCP endpoint
// over the in-memory bed, on a clock the test moves; work is counted, never timed.
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ArgumentsValidator } from '../../shared/catalog/tool.js';
import { Limits } from '../../shared/config/schema.js';
import { limitsFor } from '../../shared/limits/agent-limits.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { ResultObject } from '../../shared/result.js';
import { anAgent } from '../support/agents.js';
import { verifies } from '../support/requirements.js';
import { procurementAgent, tools, type UseCaseBed, useCaseBed } from '../support/use-case-bed.js';

const strictReads = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../shared/arguments/strict-json.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../shared/arguments/strict-json.js')>();
  return {
    ...original,
    readMessage: (text: string) => {
      strictReads.count += 1;
      return original.readMessage(text);
    },
  };
});

const { createMcpEndpoint } = await import('../../shared/edge/mcp/endpoint.js');
const { canonicalizeArguments, maxInputErrors, maxUnknownFields } = await import(
  '../../shared/arguments/canonicalize.js'
);

/** Another agent with the same access: its calls must go on while procurement floods. */
const otherAgent = anAgent('other-agent', ['procurement']);

/** A tools/call body of about `bytes` bytes: the lookup with that many bytes of unknown fields. */
const lookupBody = (id: number, padBytes = 0): string => {
  const args: Record<string, string> = { vendor: 'acme' };
  for (let index = 0, length = 0; length < padBytes; index += 1) {
    const key = `field_${index}`;
    args[key] = 'x'.repeat(36);
    length += key.length + 42;
  }
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: tools.list,
      arguments: args,
      _meta: { [PROTOCOL_VERSION_META_KEY]: '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
};

const requestOf = (body: string): Request =>
  new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': tools.list,
    },
    body,
  });

/** The result object of a tools/call answer, and its HTTP status. */
const resultOf = async (response: Response): Promise<{ status: number; result: ResultObject }> => {
  const message: { result?: { structuredContent?: unknown } } = await response.json();
  return { status: response.status, result: ResultObject.parse(message.result?.structuredContent) };
};

let bed: UseCaseBed;
beforeEach(async () => {
  bed = await useCaseBed();
  strictReads.count = 0;
});

const endpointOf = (gate: RequestGate) =>
  createMcpEndpoint(bed.deps, { allowedHostnames: null, allowedOrigins: [], requestGate: gate });

describe('the cost of one agent’s requests', () => {
  it(
    verifies(
      'limits.request-bytes',
      'refuses a costly agent past its bytes per second, without reading its body strictly, while another agent’s call is admitted',
    ),
    async () => {
      const endpoint = endpointOf(new RequestGate(bed.clock));
      // 250 KB calls: four fit in the default second's allowance (1 MiB), the fifth does not.
      const heavy = (id: number) => lookupBody(id, 250_000);
      for (let id = 1; id <= 4; id += 1) {
        const body = heavy(id);
        const answer = await resultOf(await endpoint.handle(requestOf(body), procurementAgent, body));
        expect(answer.result).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
      }
      expect(strictReads.count).toBe(4);
      const refusedBody = heavy(5);
      const refused = await resultOf(await endpoint.handle(requestOf(refusedBody), procurementAgent, refusedBody));
      expect(refused.status).toBe(200);
      expect(refused.result).toMatchObject({ status: 'denied', code: 'rate_limited', execution_id: null });
      expect(refused.result.message).toMatch(
        /^This agent may send 1048576 bytes of requests per second; nothing ran\./,
      );
      // The refused body was parsed for its id only: the strict reader did not run again.
      expect(strictReads.count).toBe(4);
      // Another agent is charged on its own allowance: its plain call runs at once.
      const plain = lookupBody(6);
      const other = await resultOf(await endpoint.handle(requestOf(plain), otherAgent, plain));
      expect(other.result.status).toBe('succeeded');
      // A second later the costly agent has its allowance back.
      bed.clock.advance(1_000);
      const later = heavy(7);
      expect((await resultOf(await endpoint.handle(requestOf(later), procurementAgent, later))).result.code).toBe(
        'invalid_arguments',
      );
      await endpoint.close();
    },
  );

  it(
    verifies('limits.request-bytes', 'answers any other refused request 429 with Retry-After, naming the bytes'),
    async () => {
      const endpoint = endpointOf(new RequestGate(bed.clock));
      const heavy = lookupBody(1, 250_000);
      for (let count = 0; count < 4; count += 1) await endpoint.handle(requestOf(heavy), procurementAgent, heavy);
      const list = JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/list',
        params: {},
        padding: 'x'.repeat(200_000),
      });
      const response = await endpoint.handle(requestOf(list), procurementAgent, list);
      expect(response.status).toBe(429);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await response.text()).toContain('bytes of requests per second');
      await endpoint.close();
    },
  );

  it(
    verifies('limits.request-bytes-per-day', 'refuses an agent past its bytes per day, however slowly it sends'),
    async () => {
      // The default day allowance (1 GiB) at 250 KB a call, one call every half second (well within
      // the second's allowance): about 4 300 calls, then the next is refused until the day refills.
      const heavy = lookupBody(1, 250_000);
      const bytes = Buffer.byteLength(heavy);
      const fit = Math.floor(1_073_741_824 / bytes);
      const gate = new RequestGate(bed.clock);
      const limits = limitsFor(Limits.parse({}), procurementAgent);
      let refusedAt = -1;
      for (let call = 0; call <= fit * 2 && refusedAt < 0; call += 1) {
        // The gate as the endpoint charges it; what the endpoint answers is checked below.
        const admission = gate.admit(procurementAgent.id, limits, { bytes });
        if (admission.kind === 'refused') refusedAt = call;
        else admission.release();
        bed.clock.advance(500);
      }
      // What refilled over those half seconds (about 2.5 %) is allowed too.
      expect(refusedAt).toBeGreaterThan(fit);
      expect(refusedAt).toBeLessThan(fit * 1.05);
      const endpoint = endpointOf(gate);
      const refused = await resultOf(await endpoint.handle(requestOf(heavy), procurementAgent, heavy));
      expect(refused.result).toMatchObject({ status: 'denied', code: 'rate_limited', execution_id: null });
      expect(refused.result.message).toMatch(
        /^This agent may send 1073741824 bytes of requests per day; nothing ran\. Try again in \d+ s\.$/,
      );
      await endpoint.close();
    },
  );
});

describe('arguments full of unknown fields', () => {
  it(
    verifies('args.unknown-fields-early', 'are refused on their unknown fields alone, before the validator runs'),
    () => {
      let validated = 0;
      const validate: ArgumentsValidator = () => {
        validated += 1;
        return [];
      };
      const tool = {
        inputSchema: { type: 'object', properties: { vendor: { type: 'string' } }, additionalProperties: false },
        validate,
      };
      const many = Object.fromEntries(Array.from({ length: 5_000 }, (_, index) => [`field_${index}`, 'x']));
      const result = canonicalizeArguments(tool, {
        value: { vendor: 'acme', ...many },
        numbers: new Map(),
        issues: [],
      });
      expect(validated).toBe(0);
      if (result.ok) throw new Error('expected a refusal');
      expect(result.errors).toHaveLength(maxInputErrors + 1);
      expect(result.errors[0]).toEqual({
        path: '/field_0',
        code: 'unknown_field',
        message: 'This field is not in the tool input schema.',
      });
      expect(result.errors.at(-1)).toMatchObject({
        code: 'more_errors',
        message: expect.stringContaining('(4900 more)'),
      });
      // A few unknown fields are still reported with everything else the validator finds.
      const few = Object.fromEntries(Array.from({ length: maxUnknownFields }, (_, index) => [`field_${index}`, 'x']));
      canonicalizeArguments(tool, { value: { vendor: 'acme', ...few }, numbers: new Map(), issues: [] });
      expect(validated).toBe(1);
    },
  );
});

describe('the byte allowances in the configuration', () => {
  it(verifies('limits.request-bytes', 'refuse an allowance smaller than the largest request, naming it'), () => {
    const parsed = Limits.safeParse({ request_bytes_per_second: 1_000, agents: { a: { request_bytes_per_day: 2.5 } } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['request_bytes_per_second', 'expected request_bytes_per_second of at least 262144 (the largest request)'],
      ['agents.a.request_bytes_per_day', 'expected request_bytes_per_day as a whole number'],
    ]);
  });
});
