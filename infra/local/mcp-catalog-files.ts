// The last good catalog of each MCP server, kept in the data folder (one owner-only file per
// system), so that a restart while a server is down still knows its tools and their policies load.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BundledMcpCatalog } from '../../shared/control-plane/bundle.js';
import type { McpCatalog, McpCatalogStore } from '../../shared/control-plane/mcp-catalogs.js';

const StoredCatalog = BundledMcpCatalog;

export class McpCatalogFiles implements McpCatalogStore {
  constructor(private readonly folder: string) {}

  async read(systemKey: string): Promise<McpCatalog | undefined> {
    const text = await readFile(this.pathOf(systemKey), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      const parsed = StoredCatalog.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  async write(systemKey: string, catalog: McpCatalog): Promise<void> {
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    // Written whole, then renamed over the old file: a crash leaves one or the other.
    const path = this.pathOf(systemKey);
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(catalog), { mode: 0o600 });
    await rename(temporary, path);
  }

  /** System keys are lowercase letters, digits, "_" and "-" (the configuration checks), so safe as names. */
  private pathOf(systemKey: string): string {
    return join(this.folder, `${systemKey}.json`);
  }
}
