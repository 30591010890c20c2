// Configuration snapshots: what is kept, what is refused, and how each problem names its place.
//
// Long: one case per way a configuration snapshot can be refused or kept, each naming its file and
// line.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { ConfigProblem } from '../../../shared/config/resolved.js';
import { formatProblem } from '../../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../../shared/control-plane/gateway-snapshot.js';
import { type ConfigFiles, loadSnapshot } from '../../../shared/control-plane/snapshot.js';
import { demoAddresses } from '../../support/demo-environment.js';
import { verifies } from '../../support/requirements.js';

const file = 'gateway.config.yaml';
const examples = new URL('../../../examples/', import.meta.url);

/** Joins lines into YAML text, so that a line's number is its index in the list plus one. */
const yaml = (...lines: string[]): string => `${lines.join('\n')}\n`;

/** Files kept in memory; every read is recorded. */
const memoryFiles = (entries: Readonly<Record<string, string>>): ConfigFiles & { readonly reads: string[] } => {
  const files = new Map(Object.entries(entries));
  const reads: string[] = [];
  return {
    reads,
    read: (relativePath) => {
      reads.push(relativePath);
      return Promise.resolve(files.get(relativePath));
    },
  };
};

/** Files read from examples/, as the local runtime reads them. */
const exampleFiles: ConfigFiles = {
  read: (relativePath) =>
    readFile(new URL(relativePath, examples), 'utf8').then(
      (text) => text,
      () => undefined,
    ),
};

const loaded = async (text: string, files: ConfigFiles): Promise<GatewaySnapshot> => {
  const result = await loadSnapshot({ text, file, environment: {}, files });
  if (!result.ok) throw new Error(`expected the snapshot to load:\n${result.problems.map(formatProblem).join('\n')}`);
  return result.snapshot;
};

const refused = async (text: string, files: ConfigFiles): Promise<ConfigProblem[]> => {
  const result = await loadSnapshot({ text, file, environment: {}, files });
  if (result.ok) {
    const names = result.snapshot.catalog.tools.map((tool) => tool.name);
    throw new Error(`expected the snapshot to be refused; it loaded with tools ${names.join(', ')}`);
  }
  return result.problems;
};

const names = (snapshot: GatewaySnapshot): string[] => snapshot.catalog.tools.map((tool) => tool.name);

/** A configuration with one system whose OpenAPI document is crm/openapi.yaml; `openapi:` is on line 5. */
const crmConfig = (openapi = 'crm/openapi.yaml'): string =>
  yaml(
    '# a configuration with one system',
    'systems:',
    '  - key: crm',
    '    base_url: http://crm.test',
    `    openapi: ${openapi}`,
    'policies: []',
  );
const openapiLine = 5;

const info = ['info:', '  title: CRM', "  version: '1.0'"];

describe('the demo configuration', () => {
  const loadDemo = async (): Promise<GatewaySnapshot> => {
    const text = await readFile(new URL('gateway.config.yaml', examples), 'utf8');
    const result = await loadSnapshot({
      text,
      file: 'examples/gateway.config.yaml',
      environment: demoAddresses,
      files: exampleFiles,
    });
    if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
    return result.snapshot;
  };

  it(
    verifies(
      ['catalog.openapi', 'catalog.deterministic-order'],
      'loads examples/gateway.config.yaml with exactly the demo tools, sorted',
    ),
    async () => {
      const snapshot = await loadDemo();
      expect(names(snapshot)).toEqual([
        'erp.purchase_orders.cancel',
        'erp.purchase_orders.create',
        'erp.purchase_orders.get',
        'erp.refunds.create',
        'erp.shipments.track',
        'erp.vendors.delete',
        'erp.vendors.get',
        'erp.vendors.grant_portal_access',
        'everything.echo',
        'everything.get-structured-content',
        'everything.get-sum',
      ]);
      expect([...snapshot.catalog.byName.keys()]).toEqual(names(snapshot));
      // The demo MCP server is not asked here: its tools are simply not known yet.
      expect(snapshot.warnings.map((warning) => warning.message)).toEqual([
        'the tools of reference are not known yet: its MCP server has not answered tools/list',
      ]);
      expect([...snapshot.files.keys()]).toEqual(['erp/openapi.yaml', 'policies/demo.cedar']);
      expect(snapshot.version).toMatch(/^[0-9a-f]{16}$/);
      expect(snapshot.config.systems[0]).toMatchObject({ base_url: 'http://127.0.0.1:1' });
    },
  );

  it(
    verifies(
      ['catalog.openapi', 'catalog.input-schema', 'catalog.marks'],
      'builds erp.purchase_orders.create from the dereferenced document',
    ),
    async () => {
      const tool = (await loadDemo()).catalog.byName.get('erp.purchase_orders.create');
      expect(tool?.inputSchema).toEqual({
        type: 'object',
        properties: {
          vendor_id: {
            type: 'string',
            'x-identifier': true,
            maxLength: 40,
            description: "The vendor's id, e.g. V-100.",
          },
          amount: {
            type: ['string', 'number'],
            format: 'decimal',
            description: 'A decimal amount such as 1500 or 1500.25.',
            'x-amount': true,
          },
          currency: { type: 'string', enum: ['EUR', 'USD', 'GBP', 'SAR', 'AED'] },
          description: { type: 'string', maxLength: 500, description: 'What is being bought, in free text.' },
          lines: {
            type: 'array',
            maxItems: 500,
            description: "The order's lines, when it has several.",
            items: {
              type: 'object',
              required: ['sku', 'quantity'],
              additionalProperties: false,
              properties: {
                sku: { type: 'string', 'x-identifier': true, maxLength: 40 },
                quantity: { type: 'integer', minimum: 1 },
                note: {
                  type: 'string',
                  maxLength: 20000,
                  description: 'Instructions for this line (packing, labelling).',
                },
              },
            },
          },
        },
        required: ['vendor_id', 'amount', 'currency'],
        additionalProperties: false,
      });
      expect(tool?.title).toBe('Create a purchase order');
      expect(tool?.access).toBe('write');
    },
  );

  it(
    verifies('catalog.admin-operations', 'lists erp.shipments.track beside the OpenAPI tools, bound to its path'),
    async () => {
      const tool = (await loadDemo()).catalog.byName.get('erp.shipments.track');
      expect(tool?.target).toEqual({
        kind: 'http',
        method: 'GET',
        path: '/shipments/{tracking_number}',
        fields: [{ field: 'tracking_number', in: 'path', name: 'tracking_number' }],
      });
      expect(tool?.access).toBe('read');
      expect(tool?.title).toBe('Track a shipment');
      expect(tool?.description).toBe('Where a shipment is and when it should arrive.');
      expect(tool?.inputSchema).toEqual({
        type: 'object',
        required: ['tracking_number'],
        properties: {
          tracking_number: {
            type: 'string',
            maxLength: 40,
            description: "The carrier's tracking number, e.g. 1Z999AA10123456784.",
            'x-identifier': true,
          },
        },
        additionalProperties: false,
      });
    },
  );
});

describe('OpenAPI documents', () => {
  const openApi30 = yaml(
    'openapi: 3.0.3',
    ...info,
    'paths:',
    '  /contacts/{id}:',
    '    get:',
    '      operationId: getContact',
    '      parameters:',
    '        - name: id',
    '          in: path',
    '          required: true',
    '          schema: { type: string }',
    '      responses:',
    "        '200':",
    '          description: The contact.',
    '    patch:',
    '      operationId: contacts.patch',
    '      parameters:',
    "        - $ref: '#/components/parameters/Id'",
    '      requestBody:',
    '        content:',
    '          application/json:',
    '            schema:',
    '              type: object',
    '              properties:',
    '                nickname: { type: string, nullable: true }',
    '      responses:',
    "        '200':",
    '          description: Patched.',
    'components:',
    '  parameters:',
    '    Id:',
    '      name: id',
    '      in: path',
    '      required: true',
    '      schema: { type: string }',
  );

  it(
    verifies('catalog.openapi', 'loads an OpenAPI 3.0 document, dereferenced and converted to JSON Schema'),
    async () => {
      const snapshot = await loaded(crmConfig(), memoryFiles({ 'crm/openapi.yaml': openApi30 }));
      expect(names(snapshot)).toEqual(['crm.contacts.patch', 'crm.get_contact']);
      expect(snapshot.catalog.byName.get('crm.contacts.patch')?.inputSchema).toEqual({
        type: 'object',
        properties: { nickname: { type: ['string', 'null'] }, id: { type: 'string' } },
        required: ['id'],
        additionalProperties: false,
      });
      expect(snapshot.files).toEqual(new Map([['crm/openapi.yaml', openApi30]]));
    },
  );

  const invalid: readonly (readonly [what: string, document: string, message: string])[] = [
    [
      'a path parameter that is not declared',
      yaml(
        'openapi: 3.1.0',
        ...info,
        'paths:',
        '  /a/{id}:',
        '    get:',
        '      responses:',
        "        '200':",
        '          description: OK',
      ),
      'crm/openapi.yaml: `/paths/a/{id}/get` is missing path parameter(s) for `{id}`.',
    ],
    [
      'a response without a description',
      yaml('openapi: 3.1.0', ...info, 'paths:', '  /a:', '    get:', '      responses:', "        '200': {}"),
      "crm/openapi.yaml: REQUIRED must have required property 'description'",
    ],
    [
      'openapi: 2.0',
      yaml('openapi: 2.0', ...info, 'paths: {}'),
      'crm/openapi.yaml: expected an OpenAPI 3.0 or 3.1 document (openapi: 2)',
    ],
    [
      'a Swagger 2.0 document',
      yaml("swagger: '2.0'", ...info, 'paths: {}'),
      'crm/openapi.yaml: expected an OpenAPI 3.0 or 3.1 document (openapi: null)',
    ],
    ['text that is not YAML', 'openapi: [3.1.0\n', 'crm/openapi.yaml: not valid YAML or JSON: '],
  ];

  it.each(invalid)(
    verifies('catalog.openapi', 'refuses the configuration for %s, at the openapi line, naming the file'),
    async (_what, document, message) => {
      const problems = await refused(crmConfig(), memoryFiles({ 'crm/openapi.yaml': document }));
      expect(problems.length).toBeGreaterThan(0);
      for (const problem of problems) {
        expect(problem).toMatchObject({ file, path: 'systems[0].openapi', line: openapiLine });
        expect(problem.message.startsWith('crm/openapi.yaml: ')).toBe(true);
      }
      expect(problems.some((problem) => problem.message.startsWith(message))).toBe(true);
    },
  );

  it(verifies('catalog.openapi', 'reports a missing file'), async () => {
    const problems = await refused(crmConfig(), memoryFiles({}));
    expect(problems).toEqual([
      {
        file,
        path: 'systems[0].openapi',
        line: openapiLine,
        message: 'the file crm/openapi.yaml cannot be read',
      },
    ]);
  });

  it(
    verifies('catalog.openapi', 'refuses a path that leaves the configuration folder, without reading it'),
    async () => {
      for (const path of ['../x.yaml', 'crm/../../x.yaml', '/etc/x.yaml', '..\\x.yaml']) {
        const files = memoryFiles({ '../x.yaml': '', 'x.yaml': '' });
        const problems = await refused(crmConfig(JSON.stringify(path)), files);
        expect(problems).toEqual([
          {
            file,
            path: 'systems[0].openapi',
            line: openapiLine,
            message: `"${path}" must be inside the configuration's folder`,
          },
        ]);
        expect(files.reads).toEqual([]);
      }
    },
  );

  it(verifies('catalog.openapi', 'reads a path inside the folder in its normalized form'), async () => {
    const files = memoryFiles({ 'crm/openapi.yaml': openApi30 });
    const snapshot = await loaded(crmConfig('./crm/x/../openapi.yaml'), files);
    expect(files.reads).toEqual(['crm/openapi.yaml']);
    expect([...snapshot.files.keys()]).toEqual(['crm/openapi.yaml']);
  });

  it(verifies('catalog.openapi', 'refuses a $ref to another file, without reading it'), async () => {
    const document = yaml(
      'openapi: 3.1.0',
      ...info,
      'paths:',
      '  /contacts:',
      '    post:',
      '      operationId: contacts.create',
      '      requestBody:',
      '        content:',
      '          application/json:',
      "            schema: { $ref: './schemas.yaml#/Contact' }",
      '      responses:',
      "        '201':",
      '          description: Created.',
    );
    const files = memoryFiles({
      'crm/openapi.yaml': document,
      'crm/schemas.yaml': yaml('Contact:', '  type: object', '  properties:', '    name: { type: string }'),
    });
    const result = await loadSnapshot({ text: crmConfig(), file, environment: {}, files });
    expect(files.reads).toEqual(['crm/openapi.yaml']);
    // On failure this shows what happened instead (the snapshot's tools and warnings).
    expect(result.ok ? { tools: names(result.snapshot), warnings: result.snapshot.warnings } : 'refused').toBe(
      'refused',
    );
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ file, path: 'systems[0].openapi', line: openapiLine });
    expect(result.problems[0]?.message).toContain('./schemas.yaml#/Contact');
  });

  it(verifies('catalog.openapi', 'reads a document named by two systems once'), async () => {
    const files = memoryFiles({ 'shared.yaml': openApi30 });
    const snapshot = await loaded(
      yaml(
        'systems:',
        '  - key: crm',
        '    base_url: http://crm.test',
        '    openapi: shared.yaml',
        '  - key: crm2',
        '    base_url: http://crm2.test',
        '    openapi: shared.yaml',
        'policies: []',
      ),
      files,
    );
    expect(files.reads).toEqual(['shared.yaml']);
    expect(names(snapshot)).toEqual([
      'crm.contacts.patch',
      'crm.get_contact',
      'crm2.contacts.patch',
      'crm2.get_contact',
    ]);
  });
});

describe('order and version', () => {
  const pathBlocks = [
    [
      '  /zebras:',
      '    get:',
      '      operationId: zebras.list',
      '      responses:',
      "        '200': { description: OK }",
    ],
    [
      '  /apples:',
      '    post:',
      '      operationId: apples.create',
      '      responses:',
      "        '201': { description: OK }",
    ],
    [
      '  /mangos/{id}:',
      '    parameters:',
      '      - { name: id, in: path, required: true, schema: { type: string } }',
      '    delete:',
      '      operationId: mangos.delete',
      '      responses:',
      "        '204': { description: OK }",
      '    get:',
      '      operationId: mangos.get',
      '      responses:',
      "        '200': { description: OK }",
    ],
    ['  /bananas:', '    get:', '      responses:', "        '200': { description: OK }"],
  ];
  const documentOf = (blocks: readonly (readonly string[])[]): string =>
    yaml('openapi: 3.1.0', ...info, 'paths:', ...blocks.flat());
  const sorted = ['crm.apples.create', 'crm.get_bananas', 'crm.mangos.delete', 'crm.mangos.get', 'crm.zebras.list'];

  it(
    verifies('catalog.deterministic-order', 'sorts the tools by name whatever the order of the paths in the document'),
    async () => {
      const forward = await loaded(crmConfig(), memoryFiles({ 'crm/openapi.yaml': documentOf(pathBlocks) }));
      const backward = await loaded(
        crmConfig(),
        memoryFiles({ 'crm/openapi.yaml': documentOf([...pathBlocks].reverse()) }),
      );
      expect(names(forward)).toEqual(sorted);
      expect(names(backward)).toEqual(sorted);
      expect([...backward.catalog.byName.keys()]).toEqual(sorted);
    },
  );

  it(verifies('catalog.deterministic-order', 'sorts the tools by name whatever the order of the systems'), async () => {
    const system = (key: string, openapi: string) => [
      `  - key: ${key}`,
      `    base_url: http://${key}.test`,
      `    openapi: ${openapi}`,
    ];
    const files = {
      'zz.yaml': documentOf([pathBlocks[0] ?? []]),
      'aa.yaml': documentOf([pathBlocks[1] ?? []]),
    };
    const admin = [
      '    operations:',
      '      - id: Audit',
      '        method: POST',
      '        path: /audit',
      '        description: Audit everything.',
    ];
    const zFirst = await loaded(
      yaml('systems:', ...system('zoo', 'zz.yaml'), ...admin, ...system('ark', 'aa.yaml'), 'policies: []'),
      memoryFiles(files),
    );
    const aFirst = await loaded(
      yaml('systems:', ...system('ark', 'aa.yaml'), ...system('zoo', 'zz.yaml'), ...admin, 'policies: []'),
      memoryFiles(files),
    );
    const expected = ['ark.apples.create', 'zoo.audit', 'zoo.zebras.list'];
    expect(names(zFirst)).toEqual(expected);
    expect(names(aFirst)).toEqual(expected);
  });

  it(
    verifies(
      'catalog.deterministic-order',
      'gives the same version for the same inputs, and another when a file changes',
    ),
    async () => {
      const document = documentOf(pathBlocks);
      const first = await loaded(crmConfig(), memoryFiles({ 'crm/openapi.yaml': document }));
      const again = await loaded(crmConfig(), memoryFiles({ 'crm/openapi.yaml': document }));
      expect(again.version).toBe(first.version);
      expect(first.version).toMatch(/^[0-9a-f]{16}$/);

      // One changed character in the OpenAPI text, with the same tools.
      const edited = document.replace('title: CRM', 'title: CRM!');
      expect(edited).not.toBe(document);
      const changed = await loaded(crmConfig(), memoryFiles({ 'crm/openapi.yaml': edited }));
      expect(names(changed)).toEqual(names(first));
      expect(changed.version).not.toBe(first.version);

      // A changed configuration text (a comment) changes it too.
      const commented = await loaded(`${crmConfig()}# edited\n`, memoryFiles({ 'crm/openapi.yaml': document }));
      expect(commented.version).not.toBe(first.version);
    },
  );
});
