// What an MCP server lists becomes the specs of its tools. The server is not trusted: each tool is
// read on its own, and one the gateway cannot take (no name, a schema that is not an object, too
// large or too deep, or one the validator cannot compile) is left out with a note in the gateway's
// own words, while the others are offered. Nothing here runs the server's text; it is only kept:
// its regular expressions are not kept at all, since the gateway would run them on agents' text.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { depthOf } from '../json-depth.js';
import { escapeInvisible } from '../text/invisible.js';
import { mapSubschemas } from './schema-walk.js';
import { isJsonObject, type JsonObject } from './tool.js';
import type { ToolServerToolSpec } from './tool-server-tools.js';

/** Largest schema taken, as JSON text (input and output each). */
const maxSchemaBytes = 64 * 1024;
/** Deepest nesting of a schema's objects and arrays. */
const maxSchemaDepth = 32;
/**
 * Largest sum of the schemas (input and output, as JSON text) of the tools taken from one server:
 * building a catalog, and checking policies against it, costs more than in proportion to it.
 */
export const maxCatalogSchemaBytes = 1024 * 1024;
const maxNameLength = 128;
const maxTitleLength = 200;
const maxDescriptionLength = 4_096;

/** A tool left out, and why. */
export interface LeftOutTool {
  /** The name as listed (clipped and quoted for display), or its place in the list. */
  readonly name: string;
  readonly reason: string;
}

export interface McpToolSpecs {
  readonly specs: readonly ToolServerToolSpec[];
  readonly leftOut: readonly LeftOutTool[];
}

/** Keywords that would name schemas across tools in the validator, which the gateway does not take. */
const namingKeywords = ['$id', '$anchor', '$dynamicAnchor', '$dynamicRef'];

const hasNamingKeyword = (value: unknown): boolean => {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item !== 'object' || item === null) continue;
    if (!Array.isArray(item) && namingKeywords.some((keyword) => Object.hasOwn(item, keyword))) return true;
    stack.push(...(Array.isArray(item) ? item : Object.values(item)));
  }
  return false;
};

/** A schema's size as JSON text (0 for one that is left out for its shape or depth anyway). */
const schemaBytes = (schema: unknown): number =>
  isJsonObject(schema) && depthOf(schema, maxSchemaDepth) <= maxSchemaDepth
    ? Buffer.byteLength(JSON.stringify(schema), 'utf8')
    : 0;

/** Why a schema cannot be taken, or null when it can. */
const schemaProblem = (schema: unknown, which: string, ajv: Ajv2020): string | null => {
  if (!isJsonObject(schema)) return `its ${which} schema is not an object`;
  // Depth first: writing out a schema nested thousands of levels deep would overflow the stack.
  if (depthOf(schema, maxSchemaDepth) > maxSchemaDepth) return `its ${which} schema nests deeper than 32 levels`;
  const text = JSON.stringify(schema);
  if (Buffer.byteLength(text, 'utf8') > maxSchemaBytes) return `its ${which} schema is larger than 64 KB`;
  if (hasNamingKeyword(schema)) return `its ${which} schema names schemas ($id or anchors)`;
  const { $schema: _dialect, ...rest } = schema;
  try {
    ajv.compile(rest);
  } catch {
    return `its ${which} schema cannot be compiled`;
  }
  return null;
};

/**
 * The input schema without the server's `pattern`s: a pattern is a regular expression that could
 * take the gateway's validator exponential time on one argument, stopping every call in the
 * process. The server still checks its own patterns; the gateway checks the rest.
 */
const withoutPatterns = (schema: JsonObject): JsonObject => {
  const { pattern: _pattern, ...rest } = mapSubschemas(schema, withoutPatterns);
  return rest;
};

/** Whether a regular expression is left anywhere in a schema (where the walk does not reach). */
const hasPattern = (value: unknown): boolean => {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item !== 'object' || item === null) continue;
    if (isJsonObject(item) && (typeof item.pattern === 'string' || Object.hasOwn(item, 'patternProperties'))) {
      return true;
    }
    stack.push(...(Array.isArray(item) ? item : Object.values(item)));
  }
  return false;
};

/**
 * A server's title or description as the gateway passes it on: clipped, and every character a
 * person cannot see (bidi controls, zero-width and tag characters, terminal escapes) written as its
 * escape, lines kept, so that no one is shown text the agent reads differently.
 */
const clipped = (value: unknown, limit: number): string | undefined =>
  typeof value === 'string' && value.trim().length > 0
    ? value.slice(0, limit).split('\n').map(escapeInvisible).join('\n')
    : undefined;

/** Shown in notes: at most 80 characters of the name, quoted (so odd characters stay visible). */
const shownName = (name: string): string => JSON.stringify(name.slice(0, 80));

/** The specs of the tools an MCP server listed, in its order, and those left out. */
export const mcpToolSpecs = (systemKey: string, tools: readonly unknown[]): McpToolSpecs => {
  // A validator of its own: compiling the server's schemas leaves nothing behind in the gateway's.
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  const specs: ToolServerToolSpec[] = [];
  const leftOut: LeftOutTool[] = [];
  let taken = 0;
  for (const [index, tool] of tools.entries()) {
    if (!isJsonObject(tool) || typeof tool.name !== 'string' || tool.name.length === 0) {
      leftOut.push({ name: `#${index + 1}`, reason: 'it has no name' });
      continue;
    }
    const name = tool.name;
    if (name.length > maxNameLength) {
      leftOut.push({ name: shownName(name), reason: 'its name is longer than 128 characters' });
      continue;
    }
    const size = schemaBytes(tool.inputSchema) + schemaBytes(tool.outputSchema);
    if (taken + size > maxCatalogSchemaBytes) {
      leftOut.push({ name: shownName(name), reason: "the server's tools are larger than 1 MB in all" });
      continue;
    }
    const problem =
      schemaProblem(tool.inputSchema, 'input', ajv) ??
      (tool.outputSchema === undefined ? null : schemaProblem(tool.outputSchema, 'output', ajv));
    if (problem !== null) {
      leftOut.push({ name: shownName(name), reason: problem });
      continue;
    }
    const inputSchema = withoutPatterns(isJsonObject(tool.inputSchema) ? tool.inputSchema : {});
    if (hasPattern(inputSchema)) {
      leftOut.push({ name: shownName(name), reason: 'its input schema matches names or text by regular expression' });
      continue;
    }
    const annotations = isJsonObject(tool.annotations) ? tool.annotations : {};
    taken += size;
    specs.push({
      name,
      title: clipped(tool.title, maxTitleLength) ?? clipped(annotations.title, maxTitleLength),
      description: clipped(tool.description, maxDescriptionLength),
      inputSchema,
      outputSchema: isJsonObject(tool.outputSchema) ? tool.outputSchema : undefined,
      // Only a tool that says it only reads is a read: silence, or anything else, is a write.
      access: annotations.readOnlyHint === true ? 'read' : null,
      destructiveHint: typeof annotations.destructiveHint === 'boolean' ? annotations.destructiveHint : undefined,
      idempotentHint: typeof annotations.idempotentHint === 'boolean' ? annotations.idempotentHint : undefined,
      configPath: ['url'],
      source: `tools/list of ${systemKey} (${shownName(name)})`,
    });
  }
  return { specs, leftOut };
};
