// The console's Lambda bundle, built the way the stack builds it (esbuild, ESM, minified, the AWS
// SDK left to the runtime): it holds the OpenID Connect sign-ins (approvers' and customers') and
// none of the local password sign-ins, whose check and throttle only the local runtime imports.
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../infra/paths.js';
import { verifies } from '../../support/requirements.js';

const bundledInputs = async (): Promise<string[]> => {
  const result = await build({
    absWorkingDir: projectPath(),
    entryPoints: [projectPath('functions', 'console.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    minify: true,
    external: ['@aws-sdk/*'],
    mainFields: ['module', 'main'],
    write: false,
    outfile: 'console.mjs',
    logLevel: 'silent',
    metafile: true,
  });
  return Object.keys(result.metafile.inputs);
};

describe('the console Lambda bundle', () => {
  it(verifies(
    'console.sign-in-local-only',
    "holds the approvers' and customers' OIDC sign-ins and not the password check, its throttle or the local wiring",
  ), async () => {
    const inputs = await bundledInputs();
    // The bundle is the console's: its route table and OIDC sign-in are in it.
    expect(inputs).toEqual(
      expect.arrayContaining([
        'functions/console/routes.ts',
        'functions/console/oidc-sign-in.ts',
        // The customer's pages ship too, with their OIDC sign-in (a fresh login for each call).
        'functions/console/customer-calls.ts',
        'functions/console/customer-oidc-sign-in.ts',
        'shared/adapters/oidc-sign-in.ts',
      ]),
    );
    expect(inputs).not.toContain('infra/local/console-identity.ts');
    expect(inputs).not.toContain('infra/local/sign-in-throttle.ts');
    expect(inputs).not.toContain('infra/local/console.ts');
    expect(inputs.filter((input) => input.startsWith('infra/'))).toEqual([]);
  }, 60_000);
});
