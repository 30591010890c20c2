// Scans of the product code's syntax for the copies issue 32 removed: a JSON-RPC code written as a
// number, a caught failure's text read by hand, a result code's words read beside the table, and
// `as` casts. Each scan reports `path:line what`, so a failing check says where to look.
import ts from 'typescript';

const parse = (path: string, text: string): ts.SourceFile =>
  ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);

const found = (source: ts.SourceFile, node: ts.Node, what: string): string =>
  `${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${what}`;

const collect = (path: string, text: string, match: (node: ts.Node, source: ts.SourceFile) => string | null) => {
  const source = parse(path, text);
  const hits: string[] = [];
  const visit = (node: ts.Node): void => {
    const hit = match(node, source);
    if (hit !== null) hits.push(found(source, node, hit));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
};

/** JSON-RPC's reserved error codes, -32768 to -32000: written by name (shared/json-rpc-codes.ts). */
export const jsonRpcLiterals = (path: string, text: string): string[] =>
  collect(path, text, (node) =>
    ts.isPrefixUnaryExpression(node) &&
    node.operator === ts.SyntaxKind.MinusToken &&
    ts.isNumericLiteral(node.operand) &&
    Number(node.operand.text) >= 32000 &&
    Number(node.operand.text) <= 32768
      ? `-${node.operand.text}`
      : null,
  );

/** `error instanceof Error ? error.message : …`: a caught failure's text read without errorText. */
export const errorTextCopies = (path: string, text: string): string[] =>
  collect(path, text, (node, source) =>
    ts.isConditionalExpression(node) &&
    /\binstanceof Error\b/.test(node.condition.getText(source)) &&
    /\.(message|stack)\b/.test(node.whenTrue.getText(source))
      ? node.getText(source).replace(/\s+/g, ' ').slice(0, 80)
      : null,
  );

/** `resultCodes.x…`: a code's words read beside it instead of built by the table (coded, refusal, …). */
export const tableWordReads = (path: string, text: string): string[] =>
  collect(path, text, (node, source) =>
    (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'resultCodes'
      ? node.getText(source)
      : null,
  );

/** `value as T` and `<T>value`, but not `as const` (which asserts nothing about a value's type). */
export const casts = (path: string, text: string): string[] =>
  collect(path, text, (node, source) =>
    (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && node.type.getText(source) !== 'const'
      ? `as ${node.type.getText(source).replace(/\s+/g, ' ')}`
      : null,
  );
