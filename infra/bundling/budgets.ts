// What each function may weigh and import, in one place: the bundle-budget test fails past these,
// and the bench prints its figures beside them. Cold start is what a new instance loads before
// its handler runs; shipped counts the chunks it loads only on some calls too.
export const bundleBudget = {
  /** Code loaded at cold start, per function (minified, without source maps and Cedar's wasm). */
  coldStartBytes: 650 * 1024,
  /**
   * Import of the handler module in a fresh process, at most this many times the cold-start floor's
   * (the DynamoDB clients and Powertools Logger and Metrics alone, timed beside it by the bench).
   */
  importOverFloor: 1.3,
  /**
   * The MCP function's first tools/call in a fresh process (import, configuration, Cedar, the call),
   * at most this many times a minimal handler's that makes the same requests.
   */
  firstCallOverFloor: 1.5,
} as const;

/**
 * Packages and modules no function may load: the OpenAPI and YAML parsers and ajv's schema
 * compiler belong to `config:push` and the local runtime (the pushed bundle carries what they
 * produce), and undici's HTTP stack is replaced by Node's own.
 */
export const forbiddenInBundles: readonly { readonly what: string; readonly input: RegExp }[] = [
  { what: 'the OpenAPI parser', input: /node_modules\/@readme\/openapi-parser\// },
  { what: 'the YAML parser', input: /node_modules\/yaml\// },
  { what: "ajv's schema compiler", input: /node_modules\/ajv\/dist\/(core|2019|2020|ajv|compile\/index)\.js$/ },
  { what: 'undici', input: /node_modules\/undici\// },
];
