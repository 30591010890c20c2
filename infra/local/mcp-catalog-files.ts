// The last good catalog of each MCP server, kept in the data folder (one owner-only file per
// system), so that a restart while a server is down still knows its tools and their policies load;
// beside it, the system's pins (what the operator accepted of its tools, `<key>.pins.json`), which
// `npm run tools:accept` removes so that the next list is pinned again.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as z from 'zod';
import { McpPins } from '../../shared/catalog/mcp-pins.js';
import { BundledMcpCatalog } from '../../shared/control-plane/bundle.js';
import type { McpCatalog, McpCatalogStore, McpPinStore } from '../../shared/control-plane/mcp-catalogs.js';

/** The data folder's MCP catalogs and pins, under `<data-dir>/mcp-catalogs`. */
export const mcpCatalogFolder = (dataDir: string): string => join(dataDir, 'mcp-catalogs');

/** System keys are lowercase letters, digits, "_" and "-" (the configuration checks), so safe as names. */
export const isSystemKey = (key: string): boolean => /^[a-z0-9_-]+$/.test(key);

class JsonFiles<T> {
  constructor(
    private readonly folder: string,
    private readonly suffix: string,
    private readonly schema: z.ZodType<T>,
  ) {}

  /**
   * The file's value, or undefined when there is none; a throw when it cannot be read or is not
   * valid, so that a damaged file is told (and logged) as one, not taken for no file (pins taken
   * for none would accept whatever the server lists now).
   */
  async read(systemKey: string): Promise<T | undefined> {
    const path = this.pathOf(systemKey);
    const text = await readFile(path, 'utf8').catch((error: unknown) => {
      if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text === undefined) return undefined;
    let parsed: ReturnType<typeof this.schema.safeParse> | undefined;
    try {
      parsed = this.schema.safeParse(JSON.parse(text));
    } catch {
      parsed = undefined;
    }
    if (parsed?.success !== true) throw new Error(`${path} is not valid`);
    return parsed.data;
  }

  async write(systemKey: string, value: T): Promise<void> {
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    // Written whole, then renamed over the old file: a crash leaves one or the other.
    const path = this.pathOf(systemKey);
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(value), { mode: 0o600 });
    await rename(temporary, path);
  }

  /** Whether there was a file to remove. */
  async remove(systemKey: string): Promise<boolean> {
    const path = this.pathOf(systemKey);
    const existed = await readFile(path).then(
      () => true,
      () => false,
    );
    await rm(path, { force: true });
    return existed;
  }

  private pathOf(systemKey: string): string {
    return join(this.folder, `${systemKey}${this.suffix}`);
  }
}

export class McpCatalogFiles extends JsonFiles<McpCatalog> implements McpCatalogStore {
  constructor(folder: string) {
    super(folder, '.json', BundledMcpCatalog);
  }
}

export class McpPinFiles extends JsonFiles<McpPins> implements McpPinStore {
  constructor(folder: string) {
    super(folder, '.pins.json', McpPins);
  }
}
