// What the functions' bundles put in place of the MCP client SDK's Node shims: the same exports,
// with the SDK's interpreting JSON Schema validator as the default (the server SDK's copy, so a function that loads both carries one; see mcp-server-shims.ts).
export { CfWorkerJsonSchemaValidator as DefaultJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';

/** In Node a failed fetch is a network or configuration error, never a browser's CORS refusal. */
export const CORS_IS_POSSIBLE = false;
