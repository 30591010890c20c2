// The generated validators inside a function bundle: the fixed require hands the code ajv's
// runtime helpers as esbuild bundles them (an ESM bundle of CommonJS modules), in a folder with
// no node_modules, as Lambda runs it. An interop slip (a `default` too many or too few) fails here.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { compileValidator, validatorCode } from '../../shared/arguments/compile-validator.js';
import type { JsonObject } from '../../shared/catalog/tool.js';
import { verifies } from '../support/requirements.js';
import { runProcess } from '../support/spawn.js';

/** Asks for every helper: equal (enum, uniqueItems), ucs2length (maxLength), ajv-formats' formats. */
const schema: JsonObject = {
  type: 'object',
  properties: {
    tags: { type: 'array', uniqueItems: true },
    name: { type: 'string', maxLength: 3 },
    when: { type: 'string', format: 'date-time' },
    kind: { enum: [{ a: 1 }, 'x', 'y', 'z', 'w', 'v'] },
  },
};
const value = { tags: ['a', 'a'], name: '😀😀😀😀', when: 'yesterday', kind: { a: 2 } };

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'validators-bundle-'));
  const entry = join(folder, 'entry.ts');
  await writeFile(
    entry,
    [
      `import { instantiateValidator } from ${JSON.stringify(projectPath('shared/arguments/standalone-validators.ts'))};`,
      'const instance = instantiateValidator(process.argv[2] ?? "");',
      'if (!instance.ok) throw new Error(instance.reason);',
      `process.stdout.write(JSON.stringify(instance.validate(${JSON.stringify(value)})));`,
    ].join('\n'),
  );
  await build({
    entryPoints: [entry],
    absWorkingDir: projectPath(),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    minify: true,
    outfile: join(folder, 'index.mjs'),
    mainFields: ['module', 'main'],
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'silent',
  });
}, 60_000);

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('generated validators in a function bundle', () => {
  it(verifies('perf.ahead-of-time-validators', 'get the helpers they ask for and answer as at load'), async () => {
    const result = await runProcess(process.execPath, [join(folder, 'index.mjs'), validatorCode(schema)], {
      cwd: folder,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(result.code, result.output).toBe(0);
    const expected = compileValidator(schema)(value);
    expect(expected.map((found) => found.code)).toEqual([
      'schema_violation',
      'too_long',
      'invalid_format',
      'not_allowed_value',
    ]);
    expect(JSON.parse(result.output)).toEqual(expected);
  });
});
