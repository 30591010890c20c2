// The tools of call-tool and MCP systems: their names, schemas, marks, access and annotations.
import { describe, expect, it } from 'vitest';
import { buildToolServerTools, type ToolServerToolSpec } from '../../../shared/catalog/tool-server-tools.js';
import { verifies } from '../../support/requirements.js';
import { aCallToolSystem, anMcpSystem } from '../../support/systems.js';

const mcpSystem = anMcpSystem;
const channelSystem = aCallToolSystem;

const spec = (overrides: Partial<ToolServerToolSpec> = {}): ToolServerToolSpec => ({
  name: 'searchDocs',
  description: 'Searches the documents.',
  inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  access: null,
  configPath: ['tools', 0],
  source: 'tools/list of docs',
  ...overrides,
});

describe('tools of tool servers', () => {
  it(verifies('systems.tool-server-tools', 'names a tool <key>.<normalized name> and calls it by its own name'), () => {
    const built = buildToolServerTools(mcpSystem(), 0, [spec(), spec({ name: 'get-sum' })], { unusable: 'warning' });
    expect(built.tools.map((tool) => [tool.name, tool.target])).toEqual([
      ['docs.search_docs', { kind: 'tool-server', name: 'searchDocs' }],
      ['docs.get-sum', { kind: 'tool-server', name: 'get-sum' }],
    ]);
    expect(built.problems).toEqual([]);
  });

  it(
    verifies(
      'systems.tool-server-tools',
      'refuses unknown fields and keeps the schema otherwise, marking fields as configured',
    ),
    () => {
      const built = buildToolServerTools(
        mcpSystem({ sensitive_fields: ['pin'], identifier_fields: ['ref'], amount_fields: ['total'] }),
        0,
        [
          spec({
            inputSchema: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { pin: { type: 'string' }, ref: { type: 'string' }, total: { type: 'string' } },
              additionalProperties: true,
            },
          }),
        ],
        { unusable: 'warning' },
      );
      expect(built.tools[0]?.inputSchema).toEqual({
        type: 'object',
        properties: {
          pin: { type: 'string', 'x-sensitive': true },
          ref: { type: 'string', 'x-identifier': true },
          total: { type: 'string', 'x-amount': true },
        },
        additionalProperties: false,
      });
    },
  );

  it(
    verifies(
      'systems.tool-server-tools',
      'leaves out a tool the gateway cannot take: a warning for a server, a problem for the file',
    ),
    () => {
      const unusable = [
        spec({ name: 'list', inputSchema: { type: 'array' } }),
        spec({ name: 'tree', inputSchema: { type: 'object', properties: { node: { $ref: '#/$defs/node' } } } }),
        spec({ name: '***' }),
      ];
      const discovered = buildToolServerTools(mcpSystem(), 2, unusable, { unusable: 'warning' });
      expect(discovered.tools).toEqual([]);
      expect(discovered.problems).toEqual([]);
      expect(discovered.warnings.map((warning) => warning.message)).toEqual([
        'tools/list of docs (docs.list) is left out: its input schema does not describe an object',
        'tools/list of docs (docs.tree) is left out: its input schema uses $ref, which the gateway does not follow',
        'tools/list of docs: the tool name "***" cannot be offered',
      ]);
      expect(discovered.warnings[0]?.path).toEqual(['systems', 2, 'tools', 0]);
      const configured = buildToolServerTools(channelSystem(), 0, unusable, { unusable: 'problem' });
      expect(configured.problems).toHaveLength(3);
      expect(configured.warnings).toEqual([]);
    },
  );

  it(
    verifies('catalog.tool-name-length', 'offers a tool whose name is too long under a shortened name, with a note'),
    () => {
      const long = `search_${'documents_'.repeat(8)}by_title`;
      const built = buildToolServerTools(mcpSystem(), 2, [spec({ name: long })], { unusable: 'warning' });
      const [tool] = built.tools;
      expect(tool?.name).toMatch(/^docs\.search_documents_documents_documents_documents_doc_[0-9a-f]{8}$/);
      expect(tool?.name).toHaveLength(64);
      // Called on its server by its own name.
      expect(tool?.target).toEqual({ kind: 'tool-server', name: long });
      expect(built.warnings.map((warning) => warning.message)).toEqual([
        `tools/list of docs: offered as ${tool?.name}: its full name docs.${long} is longer than 64 characters`,
      ]);
    },
  );

  it(verifies('systems.tool-server-tools', 'refuses two tools whose names normalize alike'), () => {
    const built = buildToolServerTools(mcpSystem(), 0, [spec({ name: 'getSum' }), spec({ name: 'get_sum' })], {
      unusable: 'warning',
    });
    expect(built.tools.map((tool) => tool.name)).toEqual(['docs.get_sum']);
    expect(built.warnings[0]?.message).toBe(
      'tools/list of docs: the tool name docs.get_sum is also used by tools/list of docs',
    );
  });

  it(
    verifies(
      'systems.tool-server-tools',
      'is a write unless its source says read, and the access map overrides either',
    ),
    () => {
      const built = buildToolServerTools(
        mcpSystem({ access: { 'docs.delete': 'read', 'docs.peek': 'write' } }),
        0,
        [
          spec({ name: 'search', access: 'read' }),
          spec({ name: 'update', access: null, idempotentHint: true, destructiveHint: false }),
          spec({ name: 'delete', access: 'write' }),
          spec({ name: 'peek', access: 'read' }),
        ],
        { unusable: 'warning' },
      );
      const byName = new Map(built.tools.map((tool) => [tool.name, tool]));
      expect(byName.get('docs.search')?.access).toBe('read');
      expect(byName.get('docs.update')?.access).toBe('write');
      expect(byName.get('docs.update')?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
      });
      expect(byName.get('docs.delete')?.access).toBe('read');
      expect(byName.get('docs.peek')?.access).toBe('write');
      expect(byName.get('docs.peek')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    },
  );

  it(
    verifies(
      'systems.tool-server-tools',
      'keeps a turned-off tool for policies only, and refuses names of tools that do not exist',
    ),
    () => {
      const built = buildToolServerTools(
        channelSystem({ disabled_tools: ['notes.search_docs', 'notes.gone'], access: { 'notes.missing': 'read' } }),
        1,
        [spec()],
        { unusable: 'problem' },
      );
      expect(built.tools).toEqual([]);
      expect(built.disabled.map((tool) => tool.name)).toEqual(['notes.search_docs']);
      expect(built.problems).toEqual([
        { path: ['systems', 1, 'disabled_tools', 1], message: 'there is no tool named notes.gone' },
        { path: ['systems', 1, 'access', 'notes.missing'], message: 'there is no tool named notes.missing' },
      ]);
    },
  );

  it(verifies('systems.tool-server-tools', 'marks secret fields of the output schema for redaction'), () => {
    const built = buildToolServerTools(
      mcpSystem({ sensitive_fields: ['pin'] }),
      0,
      [spec({ outputSchema: { type: 'object', properties: { pin: { type: 'string' }, name: { type: 'string' } } } })],
      { unusable: 'warning' },
    );
    expect(built.tools[0]?.responseSchema).toEqual({
      type: 'object',
      properties: { pin: { type: 'string', 'x-sensitive': true }, name: { type: 'string' } },
    });
  });
});
