// Reads an OpenAPI 3.0 or 3.1 document (YAML or JSON): validated and dereferenced by a real
// OpenAPI parser. References must stay inside the document: nothing is fetched from elsewhere.
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { parse } from 'yaml';
import { errorText } from '../errors.js';
import { isJsonObject, type JsonObject } from './tool.js';

type ApiDocument = Exclude<Parameters<typeof validate>[0], string>;

/** The parser's own document type, checked on the fields it relies on. */
const isApiDocument = (value: unknown): value is ApiDocument =>
  isJsonObject(value) &&
  typeof value.openapi === 'string' &&
  isJsonObject(value.info) &&
  isJsonObject(value.paths ?? {});

/** `$ref`s that point outside the document (internal ones left behind are recursive schemas). */
const externalReferences = (value: unknown, found: Set<string> = new Set()): string[] => {
  if (Array.isArray(value)) for (const item of value) externalReferences(item, found);
  else if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && !child.startsWith('#')) found.add(child);
      else externalReferences(child, found);
    }
  }
  return [...found];
};

export type OpenApiLoad = { ok: true; document: JsonObject } | { ok: false; messages: string[] };

const options = {
  resolve: { external: false, file: false },
  dereference: { circular: 'ignore' },
  validate: { errors: { colorize: false } },
} as const;

export const loadOpenApiDocument = async (text: string): Promise<OpenApiLoad> => {
  let parsed: unknown;
  try {
    parsed = parse(text, { uniqueKeys: true });
  } catch (error) {
    return {
      ok: false,
      messages: [`not valid YAML or JSON: ${errorText(error).split('\n')[0]}`],
    };
  }
  if (!isJsonObject(parsed)) return { ok: false, messages: ['the document is not an object'] };
  const version = parsed.openapi;
  if (typeof version !== 'string' || !/^3\.[01]\.\d+$/.test(version)) {
    return {
      ok: false,
      messages: [`expected an OpenAPI 3.0 or 3.1 document (openapi: ${JSON.stringify(version ?? null)})`],
    };
  }
  const copy = structuredClone(parsed);
  if (!isApiDocument(copy)) return { ok: false, messages: ['the document has no info object'] };
  const validation = await validate(copy, options);
  if (!validation.valid) {
    return {
      ok: false,
      messages: compileErrors(validation)
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.length > 0)
        .slice(0, 20),
    };
  }
  const fresh = structuredClone(parsed);
  if (!isApiDocument(fresh)) return { ok: false, messages: ['the document has no info object'] };
  const document: unknown = await dereference(fresh, options);
  if (!isJsonObject(document)) return { ok: false, messages: ['the dereferenced document is not an object'] };
  const external = externalReferences(document);
  if (external.length > 0) {
    return {
      ok: false,
      messages: external.map(
        (reference) => `the reference ${reference} leaves the document; only #/… references are followed`,
      ),
    };
  }
  return { ok: true, document };
};
