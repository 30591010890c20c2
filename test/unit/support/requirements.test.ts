// verifies() is how tests cite the requirements manifest; these tests give it small manifests of
// their own so that a planned rule and a missing one can be shown without touching the real list.
// They cite no rule: they test the test support, not the gateway.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { manifestFile, readManifest, verifiesFrom } from '../../support/requirements.js';

const folder = mkdtempSync(join(tmpdir(), 'requirements-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const manifestWith = (name: string, yaml: string): string => {
  const file = join(folder, name);
  writeFileSync(file, yaml);
  return file;
};

const file = manifestWith(
  'manifest.yaml',
  [
    '- id: demo.built',
    '  source: a test',
    '  rule: A rule that is built, with no status.',
    '- id: demo.also-built',
    '  source: a test',
    '  rule: A rule that says it is built.',
    '  status: built',
    '- id: demo.planned',
    '  source: a test',
    '  rule: A rule that is decided but not built yet.',
    '  status: planned',
  ].join('\n'),
);

describe('verifies()', () => {
  const cite = verifiesFrom(file);

  it('puts a listed id in brackets before the title', () => {
    expect(cite('demo.built', 'answers every field')).toBe('[demo.built] answers every field');
  });

  it('puts several ids in the order given', () => {
    expect(cite(['demo.also-built', 'demo.built'], 'a %s title')).toBe('[demo.also-built] [demo.built] a %s title');
  });

  it('throws on an id that is not listed, naming the id, the manifest and the test', () => {
    expect(() => cite(['demo.built', 'demo.typo'], 'a title')).toThrow(
      `verifies(): "demo.typo" is not a requirement listed in ${file} (test "a title")`,
    );
  });

  it('throws on a planned id, since no test may claim to verify a rule not built yet', () => {
    expect(() => cite('demo.planned', 'a title')).toThrow(`"demo.planned" is listed as planned in ${file}`);
  });

  it('throws on an empty list of ids', () => {
    expect(() => cite([], 'a title')).toThrow('at least one requirement id');
  });

  it('reads the manifest once, at the first call', () => {
    const changing = manifestWith(
      'changing.yaml',
      '- id: demo.first\n  source: a test\n  rule: The first rule listed.\n',
    );
    const citeChanging = verifiesFrom(changing);
    expect(citeChanging('demo.first', 'a title')).toBe('[demo.first] a title');
    writeFileSync(changing, '- id: demo.second\n  source: a test\n  rule: The second rule listed.\n');
    expect(citeChanging('demo.first', 'a title')).toBe('[demo.first] a title');
  });

  it('refuses a manifest whose status is neither built nor planned', () => {
    const wrong = manifestWith(
      'wrong.yaml',
      '- id: demo.x\n  source: a test\n  rule: A rule with a typo.\n  status: plan\n',
    );
    expect(() => verifiesFrom(wrong)('demo.x', 'a title')).toThrow();
  });

  it('reads the project manifest and accepts a built rule from it', () => {
    const citeProject = verifiesFrom(manifestFile);
    const built = readManifest(manifestFile).find((entry) => entry.status === 'built');
    expect(built).toBeDefined();
    if (built !== undefined) expect(citeProject(built.id, 'a title')).toBe(`[${built.id}] a title`);
  });
});
