// The requirements manifest is the checklist a reviewer reads: every listed rule must be cited by
// at least one test title, and every cited id must be listed.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { projectPath } from '../infra/paths.js';

const Manifest = z.array(
  z.object({
    id: z.string().regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/),
    source: z.string().min(1),
    rule: z.string().min(10),
  }),
);

const testFiles = async (folder: string): Promise<string[]> => {
  const entries = await readdir(folder, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) return testFiles(path);
      return Promise.resolve(entry.name.endsWith('.test.ts') ? [path] : []);
    }),
  );
  return nested.flat();
};

/** Ids cited in test titles: `[id]` inside the string that opens an it/test/describe call. */
const titleCall = /\b(?:it|test|describe)(?:\.each\([^)]*\))?\(\s*(['"`])((?:(?!\1).)*)\1/g;
const citation = /\[([a-z0-9-]+(?:\.[a-z0-9-]+)+)\]/g;

const citations = async (): Promise<Map<string, string[]>> => {
  const cited = new Map<string, string[]>();
  for (const file of await testFiles(projectPath('test'))) {
    const text = await readFile(file, 'utf8');
    for (const call of text.matchAll(titleCall)) {
      for (const [, id] of (call[2] ?? '').matchAll(citation)) {
        if (id === undefined) continue;
        cited.set(id, [...(cited.get(id) ?? []), relative(projectPath(), file)]);
      }
    }
  }
  return cited;
};

describe('the requirements manifest', async () => {
  const manifest = Manifest.parse(parse(await readFile(projectPath('test/requirements.yaml'), 'utf8')));
  const cited = await citations();

  it('lists each requirement once', () => {
    const ids = manifest.map((entry) => entry.id);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('has every listed requirement cited by a test', () => {
    expect(manifest.map((entry) => entry.id).filter((id) => !cited.has(id))).toEqual([]);
  });

  it('has every cited id listed', () => {
    const listed = new Set(manifest.map((entry) => entry.id));
    expect([...cited.keys()].filter((id) => !listed.has(id))).toEqual([]);
  });
});
