// Cedar's wasm as the deciding functions' bundles load it (cedarWasmModule, applied by the bundler
// to Cedar's own Node build): requiring it compiles nothing and reads the file off the main thread;
// the module is compiled once, when Cedar is first used, whether the read is done by then or not.
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cedarWasm, cedarWasmModule } from '../../infra/bundling/bundle-function.js';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { runProcess } from '../support/spawn.js';

const cedarSource = projectPath('node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js');

/**
 * Counts the wasm modules compiled and the wasm file's reads on the main thread, requires Cedar as
 * the bundles load it, and prints how many were compiled by the require, by the time the process had
 * nothing left to do, and after a parse. `early` uses Cedar at once, before the file's read is done.
 */
const probe = `
const Compiled = WebAssembly.Module;
let compiled = 0;
WebAssembly.Module = function Module(bytes) { compiled += 1; return new Compiled(bytes); };
const fs = require('node:fs');
const readFileSync = fs.readFileSync;
let syncReads = 0;
fs.readFileSync = (path, ...rest) => { if (String(path).endsWith('.wasm')) syncReads += 1; return readFileSync(path, ...rest); };
const cedar = require('./cedar_wasm.cjs');
const atImport = compiled;
const policies = { staticPolicies: 'permit(principal, action, resource);' };
const early = process.argv[1] === 'early' ? cedar.checkParsePolicySet(policies).type : null;
process.once('beforeExit', () => {
  const beforeUse = compiled;
  const parsed = cedar.checkParsePolicySet(policies).type;
  process.stdout.write(JSON.stringify({ atImport, early, beforeUse, parsed, compiled, syncReads }));
});
`;

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'gateway-cedar-wasm-'));
  await writeFile(join(folder, 'cedar_wasm.cjs'), cedarWasmModule(await readFile(cedarSource, 'utf8'), cedarSource));
  await copyFile(cedarWasm, join(folder, 'cedar_wasm_bg.wasm'));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const run = async (mode: 'early' | 'late') => {
  const result = await runProcess(process.execPath, ['-e', probe, mode], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? '' },
  });
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

describe("Cedar's wasm in the bundles of the functions that decide", () => {
  it(
    verifies('perf.cedar-wasm-off-import', 'requiring Cedar compiles nothing; its first use compiles the bytes read'),
    async () => {
      expect(await run('late')).toEqual({
        atImport: 0,
        early: null,
        beforeUse: 0,
        parsed: 'success',
        compiled: 1,
        syncReads: 0,
      });
    },
  );

  it(
    verifies('perf.cedar-wasm-off-import', 'Cedar used before its file is read answers, and the wasm is compiled once'),
    async () => {
      expect(await run('early')).toEqual({
        atImport: 0,
        early: 'success',
        beforeUse: 1,
        parsed: 'success',
        compiled: 1,
        syncReads: 1,
      });
    },
  );

  it('refuses a Cedar build that makes its wasm another way, rather than bundle it as it is', () => {
    expect(() => cedarWasmModule('const wasm = {};', 'cedar_wasm.js')).toThrow(/no longer makes its wasm/);
  });
});
