// The policy tools' view of the tools: a list the running gateway kept in the data folder that
// cannot be read is told as why the system's tools stay unknown, not taken for no list.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpCatalogFolder } from '../../../infra/local/mcp-catalog-files.js';
import { loadToolSnapshot } from '../../../infra/local/tool-snapshot.js';
import { projectPath } from '../../../infra/paths.js';
import { verifies } from '../../support/requirements.js';
import { temporaryFolder } from '../../support/runtime-process.js';

describe('the tools the policy tools read', () => {
  let dataDir: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    dataDir = await temporaryFolder('tool-snapshot-');
    await mkdir(mcpCatalogFolder(dataDir.path), { recursive: true });
    await writeFile(join(mcpCatalogFolder(dataDir.path), 'reference.json'), '{"specs": [', 'utf8');
  });
  afterAll(async () => dataDir.remove());

  it(
    verifies('code.failures-logged', "tells a kept list that cannot be read as why a system's tools are unknown"),
    async () => {
      const loaded = await loadToolSnapshot(projectPath('examples', 'gateway.config.yaml'), {}, true, dataDir.path);
      if (!loaded.ok) throw new Error(loaded.message);
      expect(loaded.remembered.has('reference')).toBe(false);
      expect(loaded.undiscovered.get('reference')).toMatch(
        /^its last list in the data folder cannot be read: .*reference\.json is not valid$/,
      );
    },
  );
});
