// The shape of the code, checked from its import statements: no cycles (a cycle makes load order
// matter and bundles carry each other), the domain free of adapters and infrastructure, and
// long files that say why they are long.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { projectPath } from '../infra/paths.js';
import { casts, errorTextCopies, jsonRpcLiterals, tableWordReads } from './support/code-scan.js';
import { verifies } from './support/requirements.js';

const sourceFolders = ['shared', 'functions', 'infra', 'scripts', 'bench'];

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (entry === 'node_modules' || entry.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });

interface SourceFile {
  readonly path: string;
  readonly lines: readonly string[];
  /** Relative imports resolved to project files, type-only ones included. */
  readonly local: readonly string[];
  /** Package imports: the package's name. */
  readonly packages: readonly string[];
}

const packageName = (specifier: string): string =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier);

const readSource = (path: string): SourceFile => {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const local: string[] = [];
  const packages: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier !== undefined &&
      ts.isStringLiteral(statement.moduleSpecifier)
        ? statement.moduleSpecifier.text
        : null;
    if (specifier === null) continue;
    if (specifier.startsWith('.')) local.push(resolve(dirname(path), specifier).replace(/\.js$/, '.ts'));
    else if (!specifier.startsWith('node:')) packages.push(packageName(specifier));
  }
  return { path, lines: text.split('\n'), local, packages };
};

const files = new Map(
  sourceFolders.flatMap((folder) => sourceFiles(projectPath(folder))).map((path) => [path, readSource(path)]),
);
const shown = (path: string): string => relative(projectPath(), path);

/** Strongly connected groups of more than one file (Tarjan), or a file importing itself. */
const importCycles = (): string[][] => {
  let counter = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (path: string): void => {
    order.set(path, counter);
    low.set(path, counter);
    counter += 1;
    stack.push(path);
    onStack.add(path);
    for (const next of files.get(path)?.local ?? []) {
      if (!files.has(next)) continue;
      if (!order.has(next)) {
        visit(next);
        low.set(path, Math.min(low.get(path) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(path, Math.min(low.get(path) ?? 0, order.get(next) ?? 0));
      }
    }
    if (low.get(path) !== order.get(path)) return;
    const group: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      group.push(shown(member));
      if (member === path) break;
    }
    if (group.length > 1 || files.get(path)?.local.includes(path)) cycles.push(group.sort());
  };
  for (const path of files.keys()) if (!order.has(path)) visit(path);
  return cycles;
};

/** Libraries that talk to clouds, networks or identity providers: adapters' business only. */
const infrastructurePackages = new Set([
  '@aws-sdk',
  '@smithy/signature-v4',
  '@smithy/types',
  'undici',
  'openid-client',
  'aws-jwt-verify',
  'aws-cdk-lib',
  'constructs',
  'dynalite',
  'aws-local-stepfunctions',
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  // The MCP client speaks to the MCP servers behind the gateway: a driven adapter's business.
  '@modelcontextprotocol/client',
  // Metrics and logs are ports (shared/metrics.ts, shared/log.ts); Powertools implements them.
  '@aws-lambda-powertools/metrics',
  '@aws-lambda-powertools/logger',
]);
/** gRPC is the gRPC front's (a driving adapter, like shared/mcp/ for the MCP SDK) and infra's only. */
const grpcPackages = new Set(['@grpc/grpc-js', '@grpc/proto-loader']);
/** HTTP client libraries: the benchmark's load generator may use one, the functions never (node:http is theirs). */
const httpClientPackages = new Set(['undici']);
const infrastructure = (name: string): boolean =>
  infrastructurePackages.has(name) || (name.startsWith('@aws-sdk/') && infrastructurePackages.has('@aws-sdk'));

/** Imports of an HTTP client library by the code the functions run (shared, functions). */
const httpClientImports = (): string[] =>
  [...files.values()]
    .filter((file) => /^(shared|functions)\//.test(shown(file.path)))
    .flatMap((file) =>
      file.packages.filter((name) => httpClientPackages.has(name)).map((name) => `${shown(file.path)} imports ${name}`),
    );

/**
 * The rings of shared/: the edge (the transports agents and people speak to and the pages they
 * see) drives the use-cases, which drive the domain; driven adapters implement the domain's
 * ports. functions/, infra/, scripts/ and bench/ compose them all. An import may point inward or
 * stay in its ring, never outward, and an adapter never reaches a transport.
 */
type Ring = 'edge' | 'use-cases' | 'domain' | 'adapters' | 'composition';
const ringOf = (path: string): Ring => {
  if (!path.startsWith('shared/')) return 'composition';
  if (path.startsWith('shared/edge/')) return 'edge';
  if (path.startsWith('shared/use-cases/')) return 'use-cases';
  if (path.startsWith('shared/adapters/')) return 'adapters';
  return 'domain';
};
const reaches: Record<Ring, readonly Ring[]> = {
  edge: ['edge', 'use-cases', 'domain'],
  'use-cases': ['use-cases', 'domain'],
  domain: ['domain'],
  adapters: ['adapters', 'domain'],
  composition: ['composition', 'edge', 'use-cases', 'domain', 'adapters'],
};
/** Where a package belongs: the transports' libraries at the edge, the rest of the outside world in adapters. */
const packageRing = (name: string): Ring | null => {
  if (grpcPackages.has(name) || name === '@modelcontextprotocol/server') return 'edge';
  return infrastructure(name) ? 'adapters' : null;
};
const ringCrossings = (sources: readonly SourceFile[]): string[] =>
  sources.flatMap((file) => {
    const from = ringOf(shown(file.path));
    const outward = (target: string, ring: Ring | null): string[] =>
      ring === null || reaches[from].includes(ring)
        ? []
        : [`${shown(file.path)} (${from}) imports ${target} (${ring})`];
    return [
      ...file.local.map(shown).flatMap((target) => outward(target, ringOf(target))),
      ...file.packages.flatMap((name) => outward(name, packageRing(name))),
    ];
  });

/** How long a function may be before a reader cannot hold it at once. */
const maxFunctionLines = 80;
/** The functions allowed to be longer, each with its reason. */
const allowedLong = new Map<string, string>([
  [
    'shared/arguments/strict-json.ts readDocument',
    'one pass over the bytes of a call; splitting the scanner would put a function call on every character',
  ],
]);

interface LongFunction {
  /** The file and the function's name (its class for a method or constructor). */
  readonly name: string;
  readonly lines: number;
}

const functionName = (node: ts.Node): string => {
  const parent = node.parent;
  if (ts.isConstructorDeclaration(node))
    return `${ts.isClassLike(parent) ? (parent.name?.text ?? 'class') : 'class'}.constructor`;
  if (ts.isMethodDeclaration(node))
    return `${ts.isClassLike(parent) ? `${parent.name?.text ?? 'class'}.` : ''}${node.name.getText()}`;
  if (ts.isFunctionDeclaration(node) && node.name !== undefined) return node.name.text;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  return `(function at line ${node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1})`;
};

/** The functions of a file over the length limit, nested ones included. */
const longFunctions = (path: string, text: string): LongFunction[] => {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > maxFunctionLines)
        found.push({ name: `${path} ${functionName(node)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
};

describe('the shape of the code', () => {
  it(verifies('code.acyclic-imports', 'has no import cycle'), () => {
    expect(files.size).toBeGreaterThan(100);
    expect(importCycles()).toEqual([]);
  });

  it(verifies('code.acyclic-imports', 'finds a cycle when there is one (the check itself works)'), () => {
    const [first, second] = [...files.keys()];
    if (first === undefined || second === undefined) throw new Error('no source files');
    const original = [files.get(first), files.get(second)];
    files.set(first, { path: first, lines: [], local: [second], packages: [] });
    files.set(second, { path: second, lines: [], local: [first], packages: [] });
    try {
      expect(importCycles()).toEqual([[shown(first), shown(second)].sort()]);
    } finally {
      for (const [index, path] of [first, second].entries()) {
        const kept = original[index];
        if (kept !== undefined) files.set(path, kept);
      }
    }
  });

  it(
    verifies('code.domain-imports-no-adapter', 'has every import point inward: edge, then use-cases, then the domain'),
    () => {
      const shared = [...files.values()].filter((file) => ringOf(shown(file.path)) !== 'composition');
      expect(shared.length).toBeGreaterThan(100);
      expect(ringCrossings(shared)).toEqual([]);
    },
  );

  it(verifies('code.domain-imports-no-adapter', 'finds an import that points outward (the check itself works)'), () => {
    const planted = (path: string, local: string[], packages: string[]): SourceFile => ({
      path: projectPath(path),
      lines: [],
      local: local.map((target) => projectPath(target)),
      packages,
    });
    expect(
      ringCrossings([
        planted('shared/policy/planted.ts', ['shared/use-cases/call-tool.ts'], []),
        planted('shared/use-cases/planted.ts', ['shared/edge/mcp/server.ts', 'shared/adapters/slots.ts'], []),
        planted('shared/adapters/planted.ts', ['shared/edge/mcp/server.ts'], ['@grpc/grpc-js']),
        planted('shared/edge/planted.ts', ['functions/mcp.ts'], ['@aws-sdk']),
        planted('shared/planted.ts', [], ['@modelcontextprotocol/server']),
      ]),
    ).toEqual([
      'shared/policy/planted.ts (domain) imports shared/use-cases/call-tool.ts (use-cases)',
      'shared/use-cases/planted.ts (use-cases) imports shared/edge/mcp/server.ts (edge)',
      'shared/use-cases/planted.ts (use-cases) imports shared/adapters/slots.ts (adapters)',
      'shared/adapters/planted.ts (adapters) imports shared/edge/mcp/server.ts (edge)',
      'shared/adapters/planted.ts (adapters) imports @grpc/grpc-js (edge)',
      'shared/edge/planted.ts (edge) imports functions/mcp.ts (composition)',
      'shared/edge/planted.ts (edge) imports @aws-sdk (adapters)',
      'shared/planted.ts (domain) imports @modelcontextprotocol/server (edge)',
    ]);
  });

  it(verifies('code.request-path-node-http', 'has the code the functions run send HTTP with node:http only'), () => {
    expect(httpClientImports()).toEqual([]);
  });

  it(verifies('code.request-path-node-http', 'finds such an import when there is one (the check itself works)'), () => {
    const planted = projectPath('shared/adapters/planted-client.ts');
    files.set(planted, { path: planted, lines: [], local: [], packages: ['undici'] });
    try {
      expect(httpClientImports()).toEqual(['shared/adapters/planted-client.ts imports undici']);
    } finally {
      files.delete(planted);
    }
  });

  it(
    verifies(
      'code.domain-imports-no-adapter',
      'records metrics through a port: Powertools Metrics is an adapter package',
    ),
    () => {
      expect(infrastructure('@aws-lambda-powertools/metrics')).toBe(true);
      expect(files.get(projectPath('shared/metrics.ts'))?.packages).toEqual([]);
      expect(files.get(projectPath('shared/executions/measured-store.ts'))?.packages).toEqual([]);
      expect(files.get(projectPath('shared/adapters/emf-metrics.ts'))?.packages).toContain(
        '@aws-lambda-powertools/metrics',
      );
    },
  );

  it(verifies('code.function-length', 'has no function longer than 80 lines but the few that say why'), () => {
    const demo = sourceFiles(projectPath('examples'));
    const long = [...files.keys(), ...demo].flatMap((path) => longFunctions(shown(path), readFileSync(path, 'utf8')));
    expect(
      long.filter((found) => !allowedLong.has(found.name)).map((found) => `${found.name}: ${found.lines} lines`),
    ).toEqual([]);
    // Every entry of the allow-list still names a long function (a split one leaves the list).
    expect([...allowedLong.keys()].filter((name) => !long.some((found) => found.name === name))).toEqual([]);
  });

  it(verifies('code.function-length', 'measures every kind of function (the check itself works)'), () => {
    const body = Array.from({ length: 81 }, (_, index) => `  step(${index});`).join('\n');
    const planted = [
      `export function declared() {\n${body}\n}`,
      `export const arrow = () => {\n${body}\n};`,
      `export class Holder {\n  constructor() {\n${body}\n  }\n  method() {\n${body}\n  }\n}`,
      `const short = () => 1;`,
    ].join('\n');
    expect(longFunctions('planted.ts', planted).map((found) => found.name)).toEqual([
      'planted.ts declared',
      'planted.ts arrow',
      'planted.ts Holder.constructor',
      'planted.ts Holder.method',
    ]);
  });
});

/** The product code and its demo, with its text: where the copies below must not come back. */
const productTexts = (): [string, string][] => [
  ...[...files.values()].map((file): [string, string] => [shown(file.path), file.lines.join('\n')]),
  ...sourceFiles(projectPath('examples')).map((path): [string, string] => [shown(path), readFileSync(path, 'utf8')]),
];
/** Product casts two days before issue 32 (there were 18 when it was filed): the bound they stay under. */
const maxProductCasts = 11;

/** What a scan finds in the product code outside the one file that is the rule's home. */
const foundOutside = (home: string, scan: (path: string, text: string) => string[]): string[] =>
  productTexts()
    .filter(([path]) => path !== home)
    .flatMap(([path, text]) => scan(path, text));

describe('one home per rule: codes, messages, casts', () => {
  it(verifies('code.named-json-rpc-codes', 'writes every JSON-RPC error code by its name'), () => {
    expect(foundOutside('shared/json-rpc-codes.ts', jsonRpcLiterals)).toEqual([]);
  });

  it(verifies('code.one-error-text', "reads a caught failure's text through the one helper"), () => {
    expect(foundOutside('shared/errors.ts', errorTextCopies)).toEqual([]);
  });

  it(verifies('code.coded-words', 'puts a result code beside its words only in the code table'), () => {
    expect(foundOutside('shared/errors.ts', tableWordReads)).toEqual([]);
  });

  it(verifies('code.cast-bound', `has at most ${maxProductCasts} casts in the product code`), () => {
    const found = productTexts()
      .filter(([path]) => /^(shared|functions|infra|scripts)\//.test(path))
      .flatMap(([path, text]) => casts(path, text));
    expect(found.length, found.join('\n')).toBeLessThanOrEqual(maxProductCasts);
  });

  it(verifies('code.unused-exports', 'runs the unused-export check from npm test, before the tests'), () => {
    const scripts = z
      .object({ scripts: z.record(z.string(), z.string()) })
      .parse(JSON.parse(readFileSync(projectPath('package.json'), 'utf8'))).scripts;
    expect(scripts.unused).toMatch(/^knip\b/);
    expect(scripts.test?.split(' && ')).toContain('npm run unused');
    expect(readFileSync(projectPath('knip.jsonc'), 'utf8')).toContain('"functions/*.ts"');
  });

  it(
    verifies('code.named-json-rpc-codes', 'finds each kind of copy when there is one (the checks themselves work)'),
    () => {
      const planted = [
        "const refused = { code: -32602, message: 'no' };",
        'const hex = 0x7d00; // -32000 in a comment is prose',
        "const text = error instanceof Error ? error.message : 'unknown';",
        'const line = error instanceof Error ? (error.stack ?? error.message) : String(error);',
        'const name = error instanceof Error ? error.name : null;',
        'const words = resultCodes.withdrawn.message;',
        "const entry = resultCodes['policy_denied'];",
        'const kept = value as Record<string, string>;',
        'const fixed = [1, 2] as const;',
        'const checked = value satisfies object;',
      ].join('\n');
      expect(jsonRpcLiterals('planted.ts', planted)).toEqual(['planted.ts:1 -32602']);
      expect(errorTextCopies('planted.ts', planted).map((hit) => hit.split(' ')[0])).toEqual([
        'planted.ts:3',
        'planted.ts:4',
      ]);
      expect(tableWordReads('planted.ts', planted)).toEqual([
        'planted.ts:6 resultCodes.withdrawn',
        "planted.ts:7 resultCodes['policy_denied']",
      ]);
      expect(casts('planted.ts', planted)).toEqual(['planted.ts:8 as Record<string, string>']);
    },
  );
});
