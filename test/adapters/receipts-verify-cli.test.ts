// `npm run receipts:verify` against a running JWK Set on loopback: a receipt of the published key
// is valid and its claims printed; an expired, changed, foreign-key or other-issuer receipt is
// refused saying why; a wrong command is told its usage.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { KeyReceiptSigner } from '../../shared/adapters/key-receipt-signer.js';
import { jwksPath } from '../../shared/receipts/signer.js';
import { verifies } from '../support/requirements.js';
import { runProcess } from '../support/spawn.js';

const newSigner = () => new KeyReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);

const verify = (args: string[]) =>
  runProcess(process.execPath, ['--import', 'tsx', projectPath('scripts/receipts-verify.ts'), ...args], {
    cwd: projectPath(),
    env: { PATH: process.env.PATH ?? '' },
    timeoutMs: 60_000,
  });

describe('npm run receipts:verify', () => {
  const signer = newSigner();
  let server: Server;
  let gateway: string;

  beforeAll(async () => {
    server = createServer(async (request, response) => {
      if (request.url !== jwksPath) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await signer.publicKeys()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    gateway = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it(verifies(
    'receipt-key.verify-command',
    'prints a valid receipt’s claims, and says why the others are refused',
  ), async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: gateway,
      sub: 'agent-1',
      jti: 'e-1',
      tool: 'erp.purchase_orders.create',
      iat: now,
      exp: now + 300,
    };
    const valid = await signer.sign(claims);
    const [header, , signature] = valid.split('.');
    const changed = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'agent-2' })).toString('base64url')}.${signature}`;
    const [ok, expired, tampered, foreign, otherIssuer, usage] = await Promise.all([
      verify([valid, '--jwks', `${gateway}${jwksPath}`]),
      verify([await signer.sign({ ...claims, iat: now - 900, exp: now - 600 }), '--issuer', gateway]),
      verify([changed, '--issuer', gateway]),
      verify([await newSigner().sign(claims), '--issuer', gateway]),
      verify([await signer.sign({ ...claims, iss: 'https://elsewhere.example' }), '--issuer', gateway]),
      verify([]),
    ]);
    expect(ok.code, ok.output).toBe(0);
    expect(JSON.parse(ok.stdout.slice(ok.stdout.indexOf('{')))).toEqual(claims);
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/^Invalid receipt: expired/);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toMatch(/^Invalid receipt: bad signature/);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toMatch(/^Invalid receipt: unknown key/);
    expect(otherIssuer.code).toBe(1);
    expect(otherIssuer.stderr).toMatch(/^Invalid receipt: wrong issuer/);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage: npm run receipts:verify');
    for (const refused of [expired, tampered, foreign, otherIssuer]) expect(refused.stdout).toBe('');
  }, 60_000);
});
