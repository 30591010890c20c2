// Tool names: `<system key>.<operation id>`, lowercase, made only of letters, digits, "_", "." and
// "-", at most 64 characters (many MCP clients refuse longer names: 65 of GitHub's operations
// would be). A longer name is shortened: its first 55 characters (without a trailing "_", "." or
// "-"), "_" and the first 8 hex digits of the SHA-256 of the whole name, so it stays readable,
// the same on every load, and distinct (a clash is still refused as a duplicate).
//
// The rule, applied to the operation id:
//   1. a lowercase-or-digit → uppercase boundary becomes "_" (createPurchaseOrder → create_Purchase_Order),
//      and so does the end of a run of capitals before a word (HTTPServer → HTTP_Server);
//   2. everything is lowercased;
//   3. every run of characters other than a-z, 0-9, "_", "." and "-" becomes one "_";
//   4. "_" at either end, and around ".", is dropped.
// An operation without an id is named from its method and path: GET /purchase-orders/{id}/lines
// becomes get_purchase_orders_by_id_lines.
import { createHash } from 'node:crypto';

export const maxToolNameLength = 64;
const hashDigits = 8;

/** A name within the limit: as it is when it fits, else its readable start and a short hash of it. */
export const fittedToolName = (name: string): string => {
  if (name.length <= maxToolNameLength) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, hashDigits);
  const start = name.slice(0, maxToolNameLength - hashDigits - 1).replace(/[_.-]+$/, '');
  return `${start}_${digest}`;
};

/** The note that says which name a tool got when its own was too long (config:check shows it). */
export const shortenedNote = (fullName: string, name: string): string =>
  `offered as ${name}: its full name ${fullName} is longer than ${maxToolNameLength} characters`;

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

/** `fullName` is there when the name was shortened (it is the name before shortening). */
export type ToolNameResult = { ok: true; name: string; fullName?: string } | { ok: false; reason: string };

export const toolName = (
  systemKey: string,
  operationId: string | undefined,
  method: string,
  path: string,
): ToolNameResult => {
  const id = operationId === undefined ? operationIdFromRoute(method, path) : normalizeOperationId(operationId);
  if (id.length === 0) return { ok: false, reason: `the operation id "${operationId ?? ''}" has no usable character` };
  const fullName = `${systemKey}.${id}`;
  const name = fittedToolName(fullName);
  return name === fullName ? { ok: true, name } : { ok: true, name, fullName };
};
