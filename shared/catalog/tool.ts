// A catalog tool: one operation of one system, as agents see it (name, schema, annotations) and as
// the gateway calls it (method, path, where each input field goes).

export type JsonObject = { [key: string]: unknown };

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export type FieldLocation = 'path' | 'query' | 'header' | 'body' | 'whole-body';

/** Where one input field travels: `field` is its name in the arguments, `name` on the wire. */
export interface FieldBinding {
  readonly field: string;
  readonly in: FieldLocation;
  readonly name: string;
}

export type Access = 'read' | 'write';

/** Schema keywords the gateway sets on input properties to mark how it treats them. */
export const marks = {
  sensitive: 'x-sensitive',
  identifier: 'x-identifier',
  amount: 'x-amount',
} as const;

export interface ToolAnnotations {
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
  readonly method: string;
  /** Path template under the system's base URL, e.g. /purchase-orders/{id}. */
  readonly path: string;
  readonly fields: readonly FieldBinding[];
  /** Schema of a successful answer, when the source gives one (used to find secret fields). */
  readonly responseSchema: JsonObject | null;
}

export interface Catalog {
  /** Every enabled tool, sorted by name. */
  readonly tools: readonly CatalogTool[];
  readonly byName: ReadonlyMap<string, CatalogTool>;
  /** Turned-off tools: policies may name them, nobody is offered them. */
  readonly disabled: readonly CatalogTool[];
}

const byToolName = (left: CatalogTool, right: CatalogTool) =>
  left.name < right.name ? -1 : left.name > right.name ? 1 : 0;

export const catalogOf = (tools: readonly CatalogTool[], disabled: readonly CatalogTool[] = []): Catalog => {
  const sorted = [...tools].sort(byToolName);
  return {
    tools: sorted,
    byName: new Map(sorted.map((tool) => [tool.name, tool])),
    disabled: [...disabled].sort(byToolName),
  };
};
