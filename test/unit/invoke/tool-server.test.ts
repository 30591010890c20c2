// What a tool server's answer means: the outcome of a call-tool or MCP system's tool.
import { describe, expect, it } from 'vitest';
import type { CatalogTool } from '../../../shared/catalog/tool.js';
import { outcomeMessage } from '../../../shared/errors.js';
import { classifyToolAnswer, type ToolServerAnswer } from '../../../shared/invoke/tool-server.js';
import { decodeFrame } from '../../../shared/wire/call-tool-frame.js';
import { exactJsonText } from '../../../shared/wire/exact-json.js';
import { verifies } from '../../support/requirements.js';
import { aTool } from '../../support/systems.js';

const rules = { names: new Set(['pin']) };
const toolOf = (access: 'read' | 'write'): CatalogTool => ({
  ...aTool({ access, name: 'docs.search' }),
  target: { kind: 'tool-server', name: 'search' },
  responseSchema: { type: 'object', properties: { key: { type: 'string', 'x-sensitive': true } } },
});
const read = toolOf('read');
const write = toolOf('write');

const outcome = (answer: ToolServerAnswer, tool: CatalogTool = write) => classifyToolAnswer(answer, tool, rules);

describe("a tool server's answer", () => {
  it(
    verifies('systems.tool-server-outcomes', 'succeeds with the structured content, redacted by schema, list and name'),
    () => {
      const result = {
        content: [{ type: 'text', text: 'visible prose' }],
        structuredContent: { key: 'k-1', pin: '1234', api_token: 't', hits: 3 },
      };
      expect(outcome({ kind: 'result', result })).toEqual({
        status: 'succeeded',
        code: null,
        result: { key: '[REDACTED]', pin: '[REDACTED]', api_token: '[REDACTED]', hits: 3 },
        httpStatus: null,
      });
    },
  );

  it(
    verifies('systems.tool-server-outcomes', 'succeeds with the content blocks when there is no structured content'),
    () => {
      const content = [{ type: 'text', text: 'hello' }];
      expect(outcome({ kind: 'result', result: { content } }, read)).toMatchObject({
        status: 'succeeded',
        result: content,
      });
    },
  );

  it(
    verifies(
      'answers.exact-integers',
      "keeps a tool's integers beyond 2^53 from the frame's bytes, in text blocks too",
    ),
    () => {
      const text = JSON.stringify({ id: 1, pin: '1234' }).replace('1', '9007199254740993');
      const frame = Buffer.concat([
        Buffer.from([0]),
        Buffer.from(
          `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":{"id":12345678901234567890}}`,
        ),
      ]);
      const decoded = decodeFrame(frame);
      if (decoded.kind !== 'result') throw new Error('expected a result frame');
      expect(exactJsonText(outcome({ kind: 'result', result: decoded.result }, read).result)).toBe(
        '{"id":12345678901234567890}',
      );
      const { structuredContent: _, ...blocksOnly } = decoded.result;
      expect(exactJsonText(outcome({ kind: 'result', result: blocksOnly }, read).result)).toBe(
        `[{"type":"text","text":${JSON.stringify('{"id":9007199254740993,"pin":"[REDACTED]"}')}}]`,
      );
    },
  );

  it(
    verifies('secrets.every-text-block', 'redacts JSON text by name in a text block and an embedded resource alike'),
    () => {
      const json = JSON.stringify({ account: 'A-1', api_token: 'tok-991', pin: '1234' });
      const redacted = JSON.stringify({ account: 'A-1', api_token: '[REDACTED]', pin: '[REDACTED]' });
      const resource = { uri: 'file:///accounts/A-1.json', mimeType: 'application/json' };
      const content = [
        { type: 'text', text: json },
        { type: 'resource', resource: { ...resource, text: ` ${json}\n` } },
        { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'no secrets here' } },
      ];
      const shown = outcome({ kind: 'result', result: { content } }, read);
      expect(shown.result).toEqual([
        { type: 'text', text: redacted },
        { type: 'resource', resource: { ...resource, text: redacted } },
        content[2],
      ]);
      expect(JSON.stringify(shown)).not.toMatch(/tok-991|1234/);
      // Nested beyond what is read, the embedded text is dropped as a text block's is.
      const deep = `${'['.repeat(80)}${']'.repeat(80)}`;
      expect(
        outcome(
          { kind: 'result', result: { content: [{ type: 'resource', resource: { ...resource, text: deep } }] } },
          read,
        ).result,
      ).toEqual([{ type: 'resource', resource: { ...resource, text: '[REDACTED]' } }]);
    },
  );

  it(
    verifies(
      'systems.tool-server-outcomes',
      "fails a tool's isError with its own machine code, else tool_error, never its prose",
    ),
    () => {
      const structured = outcome({
        kind: 'result',
        result: {
          isError: true,
          content: [{ type: 'text', text: 'Out of stock, sorry!' }],
          structuredContent: { code: 'OUT_OF_STOCK' },
        },
      });
      expect(structured).toEqual({
        status: 'failed',
        code: 'out_of_stock',
        result: null,
        httpStatus: null,
        refused: true,
      });
      expect(outcomeMessage(structured)).toBe('The system refused the call.');
      const loneToken = outcome({
        kind: 'result',
        result: { isError: true, content: [{ type: 'text', text: ' not_found ' }] },
      });
      expect(loneToken.code).toBe('not_found');
      const prose = outcome({
        kind: 'result',
        result: { isError: true, content: [{ type: 'text', text: 'It broke: see /etc/passwd' }] },
      });
      expect(prose).toMatchObject({ status: 'failed', code: 'tool_error', result: null });
      expect(JSON.stringify(prose)).not.toContain('passwd');
    },
  );

  it(verifies('systems.tool-server-outcomes', 'fails a JSON-RPC error with mcp_<code>, whatever the call was'), () => {
    expect(outcome({ kind: 'error', code: -32602 })).toEqual({
      status: 'failed',
      code: 'mcp_-32602',
      result: null,
      httpStatus: null,
      refused: true,
    });
    expect(outcome({ kind: 'error', code: -32601 }, read).code).toBe('mcp_-32601');
  });

  it(
    verifies(
      'systems.tool-server-outcomes',
      'is unknown for a write and failed for a read when the answer is lost after sending',
    ),
    () => {
      for (const answer of [
        { kind: 'timeout', sent: true },
        { kind: 'connection_failed', sent: true },
        { kind: 'too_large' },
        { kind: 'unreadable' },
        { kind: 'result', result: { content: 'not blocks' } },
        { kind: 'result', result: 'not an object' },
      ] as const) {
        expect(outcome(answer, write).status, JSON.stringify(answer)).toBe('unknown');
        expect(outcome(answer, read).status, JSON.stringify(answer)).toBe('failed');
      }
      expect(outcome({ kind: 'result', result: 'no' }).code).toBe('unreadable_response');
      expect(outcome({ kind: 'too_large' }).code).toBe('response_too_large');
      expect(outcomeMessage(outcome({ kind: 'timeout', sent: true }))).toContain('may or may not have done it');
    },
  );

  it(verifies('systems.tool-server-outcomes', 'is failed for a write that was never sent'), () => {
    expect(outcome({ kind: 'timeout', sent: false })).toMatchObject({ status: 'failed', code: 'timeout' });
    expect(outcome({ kind: 'connection_failed', sent: false })).toMatchObject({
      status: 'failed',
      code: 'connection_failed',
    });
  });
});
