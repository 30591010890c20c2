// The local control plane on real files: good edits are taken, broken or empty ones refused with
// the last good configuration kept, and unchanged files count as syncs.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalConfigSource } from '../../../infra/local/config-source.js';
import { projectPath } from '../../../infra/paths.js';
import { anAgent } from '../../support/agents.js';
import { ManualClock } from '../../support/clock.js';
import { demoAddresses } from '../../support/demo-environment.js';
import { verifies } from '../../support/requirements.js';
import { temporaryFolder } from '../../support/runtime-process.js';
import { adminOnlyConfig } from '../../support/snapshots.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let file: string;
const logged: { level: string; message: string; attributes: unknown[] }[] = [];
const log = {
  info: (message: string, ...attributes: Record<string, unknown>[]) =>
    void logged.push({ level: 'info', message, attributes }),
  warn: (message: string, ...attributes: Record<string, unknown>[]) =>
    void logged.push({ level: 'warn', message, attributes }),
};

beforeEach(async () => {
  folder = await temporaryFolder('gateway-source-');
  file = join(folder.path, 'gateway.config.yaml');
  logged.length = 0;
});
afterEach(async () => {
  await folder.remove();
});

const toolNames = async (source: LocalConfigSource) => {
  const state = await source.current();
  return state.kind === 'active' ? state.snapshot.catalog.tools.map((tool) => tool.name) : state.reason;
};

describe('LocalConfigSource', () => {
  it(verifies('control.reload', 'takes a good edit on the next check'), async () => {
    await writeFile(file, adminOnlyConfig());
    const source = new LocalConfigSource(file, {}, new ManualClock(), log);
    expect((await source.load()).ok).toBe(true);
    expect(await toolNames(source)).toEqual(['crm.notes.add']);
    await writeFile(file, adminOnlyConfig({ extraTool: true }));
    await source.sync();
    expect(await toolNames(source)).toEqual(['crm.notes.add', 'crm.notes.list']);
    expect(logged.at(-1)).toMatchObject({ level: 'info', message: 'configuration reloaded' });
  });

  it(verifies('control.reload', 'refuses a broken or empty file, logs why, and keeps the last good one'), async () => {
    await writeFile(file, adminOnlyConfig());
    const source = new LocalConfigSource(file, {}, new ManualClock(), log);
    await source.load();
    const good = source.lastGood?.version;
    await writeFile(file, adminOnlyConfig().replace('allowed_staleness: 60s', 'allowed_staleness: often'));
    await source.sync();
    expect(source.lastGood?.version).toBe(good);
    expect(await toolNames(source)).toEqual(['crm.notes.add']);
    expect(logged.at(-1)?.message).toBe('configuration change refused; keeping the last good configuration');
    expect(JSON.stringify(logged.at(-1)?.attributes)).toContain('settings.allowed_staleness');

    await writeFile(file, '');
    await source.sync();
    expect(source.lastGood?.version).toBe(good);
    expect(JSON.stringify(logged.at(-1)?.attributes)).toContain('the file is empty');
  });

  it(
    verifies('control.staleness', 'counts a check that finds the file unchanged as a sync, and a broken file as none'),
    async () => {
      await writeFile(file, adminOnlyConfig({ staleness: '10s' }));
      const clock = new ManualClock();
      const source = new LocalConfigSource(file, {}, clock, log);
      await source.load();
      clock.advance(9_000);
      await source.sync();
      clock.advance(9_000);
      expect(await toolNames(source)).toEqual(['crm.notes.add']);
      await writeFile(file, 'settings: [');
      await source.sync();
      clock.advance(2_000);
      expect(await toolNames(source)).toBe('stale');
    },
  );
});

describe('LocalConfigSource on the demo organization', () => {
  const demoAt = async () => {
    await cp(projectPath('examples'), join(folder.path, 'org'), { recursive: true });
    const config = join(folder.path, 'org', 'gateway.config.yaml');
    const source = new LocalConfigSource(config, demoAddresses, new ManualClock(), log);
    expect((await source.load()).ok).toBe(true);
    return { config, source, good: source.lastGood };
  };
  const procurement = anAgent('procurement-agent', ['procurement']);
  /** The tools procurement-agent is offered now: what a half-written edit must not take away. */
  const offered = async (source: LocalConfigSource) => {
    const state = await source.current();
    if (state.kind !== 'active') return state.reason;
    return state.snapshot.catalog.tools
      .filter((tool) => state.snapshot.policy.isListed(procurement, tool))
      .map((tool) => tool.name);
  };
  const lastRefusal = () => JSON.stringify(logged.findLast((entry) => entry.level === 'warn')?.attributes);

  it(
    verifies('config.no-half-written', 'keeps its tools when the file is cut just before policies:, and logs why'),
    async () => {
      const { config, source, good } = await demoAt();
      const before = await offered(source);
      expect(before).toContain('erp.purchase_orders.create');
      const text = await readFile(config, 'utf8');
      await writeFile(config, text.slice(0, text.indexOf('policies:')));
      await source.sync();
      expect(source.lastGood).toBe(good);
      expect(await offered(source)).toEqual(before);
      expect(lastRefusal()).toContain('policies: missing');
    },
  );

  it(verifies('config.no-half-written', 'keeps its tools when a policy file is emptied, and logs why'), async () => {
    const { source, good } = await demoAt();
    const before = await offered(source);
    await writeFile(join(folder.path, 'org', 'policies', 'demo.cedar'), '');
    await source.sync();
    expect(source.lastGood).toBe(good);
    expect(await offered(source)).toEqual(before);
    expect(lastRefusal()).toContain('the policy file policies/demo.cedar holds no policy');
  });
});
