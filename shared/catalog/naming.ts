// Tool names: `<system key>.<operation id>`, lowercase, made only of letters, digits, "_", "." and
// "-", at most 128 characters (what MCP clients accept).
//
// The rule, applied to the operation id:
//   1. a lowercase-or-digit → uppercase boundary becomes "_" (createPurchaseOrder → create_Purchase_Order),
//      and so does the end of a run of capitals before a word (HTTPServer → HTTP_Server);
//   2. everything is lowercased;
//   3. every run of characters other than a-z, 0-9, "_", "." and "-" becomes one "_";
//   4. "_" at either end, and around ".", is dropped.
// An operation without an id is named from its method and path: GET /purchase-orders/{id}/lines
// becomes get_purchase_orders_by_id_lines.

const maxToolNameLength = 128;

export const normalizeOperationId = (operationId: string): string =>
  operationId
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '_')
    .replace(/_*\._*/g, '.')
    .replace(/^[_.-]+|[_.-]+$/g, '');

export const operationIdFromRoute = (method: string, path: string): string => {
  const segments = path
    .split('/')
    .filter((segment) => segment.length > 0)
    .map((segment) => {
      const parameter = /^\{(.+)\}$/.exec(segment);
      // Path words are joined with "_" like the rest of the name (purchase-orders → purchase_orders).
      return (parameter?.[1] === undefined ? segment : `by_${parameter[1]}`).replaceAll('-', '_');
    });
  return normalizeOperationId([method.toLowerCase(), ...segments].join('_'));
};

export type ToolNameResult = { ok: true; name: string } | { ok: false; reason: string };

export const toolName = (
  systemKey: string,
  operationId: string | undefined,
  method: string,
  path: string,
): ToolNameResult => {
  const id = operationId === undefined ? operationIdFromRoute(method, path) : normalizeOperationId(operationId);
  if (id.length === 0) return { ok: false, reason: `the operation id "${operationId ?? ''}" has no usable character` };
  const name = `${systemKey}.${id}`;
  if (name.length > maxToolNameLength) {
    return { ok: false, reason: `the tool name ${name} is longer than ${maxToolNameLength} characters` };
  }
  return { ok: true, name };
};
