// `npm run tools:accept -- <system>`: the operator accepts what an MCP server now lists after it
// changed tools since they were pinned (`config:check` shows the changes). The system's pins in
// the local data folder are removed; the running gateway pins its tools again from their last list
// within a second (their new access, text and schemas are offered from then on), and a gateway not
// running pins them at its next start. Exit 0 accepted, 1 nothing was pinned, 2 the command was wrong.
import { isSystemKey, McpPinFiles, mcpCatalogFolder } from '../infra/local/mcp-catalog-files.js';
import { errorText } from '../shared/errors.js';
import { dataFolderOf, readCommandLine } from './command-line.js';

const usage = `Usage: npm run tools:accept -- <system> [--data-dir <folder>]

Accepts the changes an MCP server made to its tools since they were pinned (npm run config:check
shows them): their access, titles, descriptions and schemas as the server lists them now.

  system              the MCP system's key in the configuration
  --data-dir <folder> the local runtime's data folder (GATEWAY_DATA_DIR, default .gateway-data)

Deployed, push with config:push --accept <system> instead.
`;

const run = async (): Promise<number> => {
  const parsed = readCommandLine({ 'data-dir': { type: 'string' }, help: { type: 'boolean' } } as const, usage, {
    positionals: true,
  });
  if ('exit' in parsed) return parsed.exit;
  const [system, ...rest] = parsed.positionals;
  if (system === undefined || rest.length > 0) {
    process.stderr.write(usage);
    return 2;
  }
  if (!isSystemKey(system)) {
    process.stderr.write(`"${system.slice(0, 80)}" is not a system key (lowercase letters, digits, _ and -).\n`);
    return 2;
  }
  const dataDir = dataFolderOf(parsed.values);
  const removed = await new McpPinFiles(mcpCatalogFolder(dataDir)).remove(system);
  if (!removed) {
    process.stderr.write(`No tools of ${system} are pinned in ${dataDir}: nothing to accept.\n`);
    return 1;
  }
  process.stdout.write(
    `Accepted: the tools of ${system} are pinned again as its server lists them (by a running gateway within a second, otherwise at its next start).\n`,
  );
  return 0;
};

process.exitCode = await run().catch((error: unknown) => {
  process.stderr.write(`tools:accept failed: ${errorText(error)}\n`);
  return 1;
});
