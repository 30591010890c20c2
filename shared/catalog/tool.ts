// A catalog tool: one tool of one system, as agents see it (name, schema, annotations) and as the
// gateway calls it (an HTTP operation's method, path and field bindings, or a tool server's name).

import type { InputError } from '../result.js';
import type { FormEncoding } from '../wire/form-body.js';

export type JsonObject = { [key: string]: unknown };

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `body`: a member of a JSON body; `form`: a field of a form body (application/x-www-form-urlencoded). */
type FieldLocation = 'path' | 'query' | 'header' | 'body' | 'whole-body' | 'form';

/** Where one input field travels: `field` is its name in the arguments, `name` on the wire. */
export interface FieldBinding {
  readonly field: string;
  readonly in: FieldLocation;
  readonly name: string;
  /** A form field's encoding, when the operation's Encoding Object gives one (form-body.ts). */
  readonly encoding?: FormEncoding;
}

export type Access = 'read' | 'write';

/** An operation of an HTTP system: where each input field travels. */
export interface HttpTarget {
  readonly kind: 'http';
  readonly method: string;
  /** Path template under the system's base URL, e.g. /purchase-orders/{id}. */
  readonly path: string;
  readonly fields: readonly FieldBinding[];
}

/** A tool of an MCP server (behind a call-tool proxy or spoken to directly), by its own name there. */
interface ToolServerTarget {
  readonly kind: 'tool-server';
  readonly name: string;
}

export type ToolTarget = HttpTarget | ToolServerTarget;

/** The wire bindings of a tool's input fields (none for a tool server: arguments travel whole). */
export const fieldBindings = (tool: { readonly target?: ToolTarget | undefined }): readonly FieldBinding[] =>
  tool.target?.kind === 'http' ? tool.target.fields : [];

/** Schema keywords the gateway sets on input properties to mark how it treats them. */
export const marks = {
  sensitive: 'x-sensitive',
  identifier: 'x-identifier',
  amount: 'x-amount',
} as const;

interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

export interface CatalogTool {
  readonly name: string;
  readonly systemKey: string;
  /** The operation id as the source named it (or the id derived from the route). */
  readonly operationId: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
  readonly annotations: ToolAnnotations;
  readonly access: Access;
  /** How the gateway reaches the tool: an HTTP operation, or a tool on an MCP server. */
  readonly target: ToolTarget;
  /** Schema of a successful answer, when the source gives one (used to find secret fields). */
  readonly responseSchema: JsonObject | null;
}

/** Checks canonical arguments against a tool's input schema: every problem found, none when valid. */
export type ArgumentsValidator = (value: unknown) => InputError[];

/** A catalog tool with the validator of its arguments, as a configuration snapshot holds it. */
export interface ToolWithValidator extends CatalogTool {
  readonly validate: ArgumentsValidator;
}

export interface Catalog {
  /** Every enabled tool, sorted by name. */
  readonly tools: readonly ToolWithValidator[];
  readonly byName: ReadonlyMap<string, ToolWithValidator>;
  /** Turned-off tools: policies may name them, nobody is offered them. */
  readonly disabled: readonly ToolWithValidator[];
}

const byToolName = (left: CatalogTool, right: CatalogTool) =>
  left.name < right.name ? -1 : left.name > right.name ? 1 : 0;

export const catalogOf = (
  tools: readonly ToolWithValidator[],
  disabled: readonly ToolWithValidator[] = [],
): Catalog => {
  const sorted = [...tools].sort(byToolName);
  return {
    tools: sorted,
    byName: new Map(sorted.map((tool) => [tool.name, tool])),
    disabled: [...disabled].sort(byToolName),
  };
};
