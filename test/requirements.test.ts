// The requirements manifest is the checklist a reviewer reads: every built rule must be cited by at
// least one test through verifies(), and every cited id must be listed. verifies() itself only sees
// the tests a run registers; reading the source here covers every test file, whichever suites run.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../infra/paths.js';
import { manifestFile, readManifest } from './support/requirements.js';

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });

/** A bracketed id as titles wrote citations before verifies(): `[result.is-error]`. */
const bracketedId = /\[[a-z0-9-]+(?:\.[a-z0-9-]+)+\]/;

const registrars = new Set(['it', 'test', 'describe']);

/** The name a call chain starts from: `it` for it(...), it.only(...), it.each(table)(...), it.skipIf(c)(...). */
const rootName = (callee: ts.Expression): string | undefined => {
  let node = callee;
  for (;;) {
    if (ts.isIdentifier(node)) return node.text;
    if (ts.isPropertyAccessExpression(node) || ts.isCallExpression(node)) node = node.expression;
    else return undefined;
  }
};

const isVerifiesCall = (node: ts.Node): node is ts.CallExpression =>
  ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'verifies';

const literalText = (node: ts.Node): string | undefined =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : undefined;

/** The ids of a verifies() call, or undefined when they are not literals this check can read. */
const citedIds = (call: ts.CallExpression): string[] | undefined => {
  const first = call.arguments[0];
  if (first === undefined) return undefined;
  const single = literalText(first);
  if (single !== undefined) return [single];
  if (!ts.isArrayLiteralExpression(first)) return undefined;
  const ids = first.elements.map(literalText);
  return ids.every((id) => id !== undefined) ? ids : undefined;
};

type Place = string;

interface Scan {
  /** Each cited id with the places (file:line) that cite it. */
  cited: Map<string, Place[]>;
  /** verifies() calls whose ids are not literals. */
  unreadable: Place[];
  /** Titles that still hold a bracketed id outside verifies(), which would cite nothing. */
  oldStyle: string[];
}

const scan = (): Scan => {
  const result: Scan = { cited: new Map(), unreadable: [], oldStyle: [] };
  for (const file of sourceFiles(projectPath('test'))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const place = (node: ts.Node): Place =>
      `${relative(projectPath(), file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;

    /** Whether a title holds a bracketed id in its own text, not counting verifies() calls inside it. */
    const hasBracketedId = (node: ts.Node): boolean => {
      if (isVerifiesCall(node)) return false;
      const text = ts.isStringLiteral(node) || ts.isTemplateLiteralToken(node) ? node.text : undefined;
      if (text !== undefined && bracketedId.test(text)) return true;
      return ts.forEachChild(node, (child) => hasBracketedId(child) || undefined) ?? false;
    };

    const visit = (node: ts.Node): void => {
      if (isVerifiesCall(node)) {
        const ids = citedIds(node);
        if (ids === undefined) result.unreadable.push(`${place(node)} ${node.getText(source)}`);
        for (const id of ids ?? []) result.cited.set(id, [...(result.cited.get(id) ?? []), place(node)]);
      } else if (ts.isCallExpression(node) && registrars.has(rootName(node.expression) ?? '')) {
        const title = node.arguments[0];
        if (title !== undefined && hasBracketedId(title))
          result.oldStyle.push(`${place(title)} ${title.getText(source)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return result;
};

describe('the requirements manifest', () => {
  const manifest = readManifest(manifestFile);
  const { cited, unreadable, oldStyle } = scan();
  const planned = new Set(manifest.filter((entry) => entry.status === 'planned').map((entry) => entry.id));

  it('lists each requirement once', () => {
    const ids = manifest.map((entry) => entry.id);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('has every built requirement cited by a test', () => {
    expect(
      manifest.filter((entry) => entry.status === 'built' && !cited.has(entry.id)).map((entry) => entry.id),
    ).toEqual([]);
  });

  it('has every cited id listed', () => {
    const listed = new Set(manifest.map((entry) => entry.id));
    expect([...cited].filter(([id]) => !listed.has(id))).toEqual([]);
  });

  it('has no test citing a planned requirement', () => {
    expect([...cited].filter(([id]) => planned.has(id))).toEqual([]);
  });

  it('reads the ids of every verifies() call as literals', () => {
    expect(unreadable).toEqual([]);
  });

  it('has no test title citing an id in brackets outside verifies()', () => {
    expect(oldStyle).toEqual([]);
  });
});
