// What the deployed functions load, checked from their import statements: from each function entry
// (functions/*.ts, and the gRPC service's container) the static import graph (relative imports
// followed, dynamic import() included, type-only imports left out as the compiler erases them)
// reaches no parser of configuration files and no JSON Schema compiler. Those run in config:push
// and in the local runtime only; the functions load the snapshot config:push compiled, and
// instantiate its generated validators with ajv's runtime helpers and ajv-formats' formats.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../infra/paths.js';
import { verifies } from './support/requirements.js';

/** Module specifiers that load at run time, in source order: static, re-exported and dynamic. */
const runtimeImports = (path: string): string[] => {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isImportDeclaration(node) &&
      node.importClause?.isTypeOnly !== true &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(node) &&
      !node.isTypeOnly &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      // No dynamic import in the functions' graph is exempt: each is followed like a static one.
      const [specifier] = node.arguments;
      found.push(specifier !== undefined && ts.isStringLiteral(specifier) ? specifier.text : '(computed)');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
};

/** What a graph reaches: project files, and package specifiers with the file that imports each. */
interface Reach {
  readonly files: ReadonlySet<string>;
  readonly packages: ReadonlyMap<string, string>;
}

const reachFrom = (entry: string): Reach => {
  const files = new Set<string>([entry]);
  const packages = new Map<string, string>();
  const queue = [entry];
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    for (const specifier of runtimeImports(path)) {
      const importer = relative(projectPath(), path);
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(path), specifier).replace(/\.js$/, '.ts');
        if (files.has(target)) continue;
        files.add(target);
        if (target.endsWith('.ts') && existsSync(target)) queue.push(target);
      } else if (!specifier.startsWith('node:') && !packages.has(specifier)) {
        packages.set(specifier, importer);
      }
    }
  }
  return { files, packages };
};

/** Project modules that parse configuration files. */
const parserModules = ['shared/catalog/openapi-document.ts', 'shared/config/load.ts', 'shared/config/yaml-lines.ts'];

/** Why a package specifier may not be loaded by a function, or null when it may. */
const forbiddenPackage = (specifier: string): string | null => {
  if (specifier === 'yaml' || specifier.startsWith('yaml/')) return 'the YAML parser';
  if (specifier.startsWith('@readme/')) return 'the OpenAPI parser';
  if (specifier === '(computed)') return 'an import whose module cannot be read from the source';
  // ajv's runtime helpers are what generated validators require; everything else is its compiler.
  if (specifier === 'ajv' || specifier.startsWith('ajv/')) {
    return /^ajv\/dist\/runtime\/[a-z0-9_]+\.js$/.test(specifier) ? null : "ajv's schema compiler";
  }
  if (specifier === 'ajv-formats' || specifier.startsWith('ajv-formats/')) {
    return specifier === 'ajv-formats/dist/formats.js' ? null : "ajv-formats' compile-time plugin";
  }
  return null;
};

const violations = (entry: string): string[] => {
  const reach = reachFrom(entry);
  return [
    ...[...reach.packages]
      .flatMap(([specifier, importer]) => {
        const why = forbiddenPackage(specifier);
        return why === null ? [] : [`${importer} imports ${specifier} (${why})`];
      })
      .sort(),
    ...parserModules
      .filter((module) => reach.files.has(projectPath(module)))
      .map((module) => `${module} (a configuration parser) is reached`),
  ];
};

/** Every Lambda function, and the gRPC service's container, which loads the same snapshot in AWS. */
const functionEntries = [
  ...readdirSync(projectPath('functions'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => projectPath('functions', name)),
  projectPath('infra', 'container', 'grpc-main.ts'),
];

describe('what the deployed functions load', () => {
  it(verifies('perf.request-path-imports', 'reaches no YAML or OpenAPI parser and no JSON Schema compiler'), () => {
    expect(functionEntries.length).toBeGreaterThanOrEqual(8);
    const found = Object.fromEntries(
      functionEntries.map((entry) => [relative(projectPath(), entry), violations(entry)]),
    );
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((entry) => [entry, []])));
    // The functions that check arguments do load the generated validators' runtime.
    const mcp = reachFrom(projectPath('functions', 'mcp.ts'));
    expect([...mcp.packages.keys()]).toEqual(
      expect.arrayContaining(['ajv/dist/runtime/equal.js', 'ajv-formats/dist/formats.js']),
    );
    expect(mcp.files.has(projectPath('shared/control-plane/compiled-snapshot.ts'))).toBe(true);
  });

  it(
    verifies(
      'perf.request-path-imports',
      'finds the parsers and the compiler from config:push (the check itself works)',
    ),
    () => {
      expect(violations(projectPath('scripts', 'config-push.ts'))).toEqual(
        expect.arrayContaining([
          'shared/config/yaml-lines.ts (a configuration parser) is reached',
          'shared/catalog/openapi-document.ts imports @readme/openapi-parser (the OpenAPI parser)',
          "shared/arguments/compile-validator.ts imports ajv/dist/2020.js (ajv's schema compiler)",
          "shared/arguments/compile-validator.ts imports ajv-formats (ajv-formats' compile-time plugin)",
          'shared/catalog/openapi-document.ts (a configuration parser) is reached',
        ]),
      );
    },
  );
});
