// The README's client examples run as printed against the demo: each is read from README.md by its
// fence, only the port changed (the demo listens on a free one here), and run the way the README
// says: the TypeScript one as `client.mts` with the project's SDK, the Python one with the SDK that
// `pip install mcp` gives, kept in .venv-snippets/ by scripts/readme-python.sh (CI runs it first).
// Each runs twice: its idempotency key makes the second run answer the first run's order.
import { existsSync } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalOptions } from '../../infra/local/options.js';
import { type LocalRuntime, startLocalRuntime } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
import { demoAddresses } from '../support/demo-environment.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

/** The URL the README's examples name: `npm start`'s MCP endpoint. */
const printedUrl = 'http://127.0.0.1:8787/mcp';
const python = projectPath('.venv-snippets', 'bin', 'python');

/** The one fenced block of this language in the README whose text holds `marker`. */
const exampleOf = (readme: string, language: string, marker: string): string => {
  const blocks = [...readme.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)]
    .filter(([, lang, text]) => lang === language && text?.includes(marker))
    .map(([, , text]) => text ?? '');
  expect(blocks, `README.md: ${language} blocks holding ${marker}`).toHaveLength(1);
  const text = blocks[0] ?? '';
  expect(text.split(printedUrl), `README.md: the ${language} example names ${printedUrl} once`).toHaveLength(2);
  return text;
};

let runtime: LocalRuntime;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let readme: string;

beforeAll(async () => {
  readme = await readFile(projectPath('README.md'), 'utf8');
  folder = await temporaryFolder('gateway-readme-');
  // The examples import the project's SDK as a user's project would find its own.
  await symlink(projectPath('node_modules'), join(folder.path, 'node_modules'), 'dir');
  // The demo as `npm start` runs it (a fresh demo ERP), in memory, without the demo tools.
  runtime = await startLocalRuntime(
    LocalOptions.parse({ port: '0', grpcPort: '0', erpPort: '0', memory: true, demoTools: false, demoMcp: false }),
    { variables: demoAddresses, logLevel: 'ERROR' },
  );
});
afterAll(async () => {
  await runtime?.stop();
  await folder?.remove();
});

/** Runs an example saved under `name` with `command`, against this demo, and answers what it printed. */
const run = async (name: string, text: string, command: string): Promise<string> => {
  const file = join(folder.path, name);
  await writeFile(file, text.replace(printedUrl, runtime.mcpUrl));
  const ran = await runProcess(command, [file], {
    cwd: folder.path,
    env: { PATH: process.env.PATH },
    timeoutMs: 60_000,
  });
  expect(ran.code, `${name} ended with ${ran.code}:\n${ran.output}`).toBe(0);
  return ran.stdout;
};

/**
 * The execution ids of the order each run placed (the first id it printed): the examples set an
 * idempotency key, so running one again answers the order the first run placed and places none.
 */
const placedTwice = (runs: readonly string[], idField: RegExp) => {
  const ids = runs.map((printed) => idField.exec(printed)?.[1]);
  expect(ids[0]).toEqual(expect.any(String));
  expect(ids[1]).toBe(ids[0]);
  for (const printed of runs) expect(printed).not.toContain('PO-1002');
};

describe("the README's client examples", () => {
  it(
    verifies(
      ['readme.examples-run', 'retries.docs-per-client'],
      'the TypeScript example, saved as client.mts, places an order and reads PO-1001; run again, it places none',
    ),
    async () => {
      const example = exampleOf(readme, 'ts', '@modelcontextprotocol/client');
      const printed = await run('client.mts', example, process.execPath);
      expect(printed.match(/status: 'succeeded'/g)).toHaveLength(2);
      expect(printed).toContain("id: 'PO-1001'");
      placedTwice([printed, await run('client.mts', example, process.execPath)], /execution_id: '([^']+)'/);
    },
  );

  it(
    verifies(
      ['readme.examples-run', 'retries.docs-per-client'],
      'the Python example runs with the SDK `pip install mcp` gives (2.x); run again, it places no second order',
    ),
    async () => {
      // Not skipped when missing: a README example nobody ran is what this test exists to prevent.
      if (!existsSync(python)) {
        throw new Error(
          "The README's Python example is run with the MCP SDK kept in .venv-snippets/, which is missing: run scripts/readme-python.sh once (it needs PyPI; .ci/run does it).",
        );
      }
      const version = await runProcess(python, ['-c', 'import importlib.metadata as m; print(m.version("mcp"))']);
      expect(version.stdout.trim()).toMatch(/^2\./);
      const example = exampleOf(readme, 'python', 'from mcp import');
      const printed = await run('client.py', example, python);
      expect(printed.match(/'status': 'succeeded'/g)).toHaveLength(2);
      expect(printed).toContain("'id': 'PO-1001'");
      placedTwice([printed, await run('client.py', example, python)], /'execution_id': '([^']+)'/);
    },
  );
});
