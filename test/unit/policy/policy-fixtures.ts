// Snapshots for the policy tests, built by the real loader: a small "shop" system whose tools are
// described in the configuration, with the Cedar files kept in memory; and the demo organization
// read from examples/.
import { readFile } from 'node:fs/promises';
import { canonicalizeArguments } from '../../../shared/arguments/canonicalize.js';
import { readArguments } from '../../../shared/arguments/strict-json.js';
import type { JsonObject, ToolWithValidator } from '../../../shared/catalog/tool.js';
import { type ConfigProblem, formatProblem } from '../../../shared/config/resolved.js';
import type { GatewaySnapshot, SnapshotLoad } from '../../../shared/control-plane/gateway-snapshot.js';
import { loadSnapshot } from '../../../shared/control-plane/snapshot.js';
import { type PolicyCase, readCaseFile } from '../../../shared/policy/case-file.js';
import type { PolicyEngine } from '../../../shared/policy/engine.js';
import { type CaseResult, rehearseCase } from '../../../shared/use-cases/rehearse-case.js';
import { demoAddresses } from '../../support/demo-environment.js';
import { snapshotOf } from '../../support/snapshots.js';

/** Joins lines into a text whose line n is the n-th argument. */
export const lines = (...items: string[]): string => `${items.join('\n')}\n`;

/**
 * The shop system's tools:
 * - shop.pay (POST, write): amount (decimal), currency (EUR/USD), count (integer), optional flag,
 *   note (required but nullable), ratio (plain number) and mixed (a union) left out of Cedar,
 *   tags (strings), meta { a (integer, required), b (string) }, fee (x-amount on a number);
 * - shop.refund (POST, write): amount (decimal), optional reason;
 * - shop.search (POST, made read by `access`): optional query;
 * - shop.look (GET, read): no fields;
 * - shop.off (DELETE, turned off).
 */
const shopOperations = [
  '      - id: pay',
  '        method: POST',
  '        path: /pay',
  '        description: Pays.',
  '        input_schema:',
  '          type: object',
  '          required: [amount, currency, count, note, ratio]',
  '          properties:',
  '            amount: { type: string }',
  '            currency: { type: string, enum: [EUR, USD] }',
  '            count: { type: integer }',
  '            flag: { type: boolean }',
  '            note: { type: [string, "null"] }',
  '            ratio: { type: number }',
  '            mixed: { type: [string, integer] }',
  '            tags: { type: array, items: { type: string } }',
  '            meta: { type: object, required: [a], properties: { a: { type: integer }, b: { type: string } } }',
  '            fee: { type: number, x-amount: true }',
  '      - id: refund',
  '        method: POST',
  '        path: /refunds',
  '        description: Refunds.',
  '        input_schema:',
  '          type: object',
  '          required: [amount]',
  '          properties:',
  '            amount: { type: string }',
  '            reason: { type: string }',
  '      - id: search',
  '        method: POST',
  '        path: /search',
  '        description: Searches.',
  '        input_schema:',
  '          type: object',
  '          properties:',
  '            query: { type: string }',
  '      - id: look',
  '        method: GET',
  '        path: /look',
  '        description: Looks.',
  '      - id: off',
  '        method: DELETE',
  '        path: /off',
  '        description: Turned off.',
];

/** The shop configuration naming the given policy files; the `policies:` list starts on line 2. */
export const shopConfig = (policies: readonly string[]): string =>
  lines(
    policies.length === 0 ? 'policies: []' : 'policies:',
    ...policies.map((path) => `  - ${path}`),
    'systems:',
    '  - key: shop',
    '    base_url: http://127.0.0.1:9',
    '    amount_fields: [amount]',
    '    access: { shop.search: read }',
    '    disabled_tools: [shop.off]',
    '    operations:',
    ...shopOperations,
  );

/** Loads the shop configuration with the given policy files (path → Cedar text), in that order. */
const loadShop = (policies: Readonly<Record<string, string>>, file = 'gateway.config.yaml'): Promise<SnapshotLoad> => {
  const files = new Map(Object.entries(policies));
  return loadSnapshot({
    text: shopConfig([...files.keys()]),
    file,
    environment: {},
    files: { read: async (path) => files.get(path) },
  });
};

export const loadedShop = async (policies: Readonly<Record<string, string>>): Promise<GatewaySnapshot> => {
  const result = await loadShop(policies);
  if (!result.ok) throw new Error(`expected the policies to load:\n${result.problems.map(formatProblem).join('\n')}`);
  return result.snapshot;
};

/** The shop's policy engine with one policy file, p.cedar. */
export const shopEngine = async (cedar: string): Promise<PolicyEngine> =>
  (await loadedShop({ 'p.cedar': cedar })).policy;

export const refusedShop = async (
  policies: Readonly<Record<string, string>>,
  file = 'gateway.config.yaml',
): Promise<ConfigProblem[]> => {
  const result = await loadShop(policies, file);
  if (result.ok) throw new Error('expected the policies to be refused; they loaded');
  return result.problems;
};

/** A tool of the snapshot, turned off or not. */
export const toolNamed = (snapshot: GatewaySnapshot, name: string): ToolWithValidator => {
  const tool =
    snapshot.catalog.byName.get(name) ?? snapshot.catalog.disabled.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool;
};

/** The canonical form of arguments given as JSON text, as the gateway computes it before deciding. */
export const canonical = (tool: ToolWithValidator, json: string): JsonObject => {
  const read = readArguments(json, []);
  if (read === null) throw new Error(`not JSON: ${json}`);
  const result = canonicalizeArguments(tool, read);
  if (!result.ok) throw new Error(`arguments refused: ${JSON.stringify(result.errors)}`);
  return result.arguments.value;
};

const examples = new URL('../../../examples/', import.meta.url);

/** The demo organization, read from examples/ through a map of its files. */
export const loadDemo = async (): Promise<GatewaySnapshot> => {
  const files: Record<string, string> = {};
  for (const path of ['erp/openapi.yaml', 'policies/demo.cedar']) {
    files[path] = await readFile(new URL(path, examples), 'utf8');
  }
  return snapshotOf(await readFile(new URL('gateway.config.yaml', examples), 'utf8'), {
    files,
    file: 'gateway.config.yaml',
    environment: demoAddresses,
  });
};

export const demoPolicyText = (): Promise<string> => readFile(new URL('policies/demo.cedar', examples), 'utf8');

/** The one case of a case file's text. */
export const onlyCase = (text: string): PolicyCase => {
  const file = readCaseFile(text);
  if (!file.ok) throw new Error(`expected the case file to be read: ${JSON.stringify(file.problems)}`);
  const [found] = file.cases;
  if (found === undefined) throw new Error('no case');
  return found;
};

/** The one case of a case file's text, rehearsed on the demo organization as policy:test does. */
export const rehearsedOnDemo = async (text: string): Promise<CaseResult> =>
  rehearseCase(
    { snapshot: await loadDemo(), configFile: 'gateway.config.yaml', undiscovered: new Map() },
    onlyCase(text),
  );
