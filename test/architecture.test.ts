// The shape of the code, checked from its import statements: no cycles (a cycle makes load order
// matter and bundles carry each other), the domain free of adapters and infrastructure, and
// long files that say why they are long.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../infra/paths.js';
import { verifies } from './support/requirements.js';

const sourceFolders = ['shared', 'functions', 'infra', 'scripts', 'bench'];
/** Folders whose long files must say why, beyond the product code: the tests and the demo. */
const otherFolders = ['test', 'examples'];

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
    verifies('code.domain-imports-no-adapter', 'keeps the domain free of adapters, functions and infrastructure'),
    () => {
      const domain = [...files.values()].filter(
        (file) => shown(file.path).startsWith('shared/') && !shown(file.path).startsWith('shared/adapters/'),
      );
      expect(domain.length).toBeGreaterThan(50);
      const crossings = domain.flatMap((file) => [
        ...file.local
          .map(shown)
          .filter((target) => /^(shared\/adapters|functions|infra|scripts|bench)\//.test(target))
          .map((target) => `${shown(file.path)} imports ${target}`),
        ...file.packages
          .filter(
            (name) => infrastructure(name) && !(grpcPackages.has(name) && shown(file.path).startsWith('shared/grpc/')),
          )
          .map((name) => `${shown(file.path)} imports ${name}`),
        ...file.packages
          .filter((name) => name === '@modelcontextprotocol/server' && !shown(file.path).startsWith('shared/mcp/'))
          .map((name) => `${shown(file.path)} imports ${name}`),
      ]);
      expect(crossings).toEqual([]);
    },
  );

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

  it(verifies('code.long-files-explained', 'has every source file over 300 lines say why in its header'), () => {
    const others = otherFolders.flatMap((folder) => sourceFiles(projectPath(folder)));
    const unexplained = [...files.keys(), ...others].filter((path) => {
      const lines = readFileSync(path, 'utf8').split('\n');
      if (lines.length <= 300) return false;
      // The header: the comment lines before the first import or code.
      const header = lines.slice(
        0,
        lines.findIndex((line) => !line.startsWith('//')),
      );
      return !header.some((line) => /\blong\b|\blength\b/i.test(line));
    });
    expect(unexplained.map(shown)).toEqual([]);
  });
});
