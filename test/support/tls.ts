// A self-signed certificate for 127.0.0.1, made by the openssl command line (Node makes keys but
// not certificates), for a test server that must speak HTTPS: a client that fetches over HTTPS
// only (aws-jwt-verify) trusts it as an extra CA, as NODE_EXTRA_CA_CERTS adds one.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface LoopbackCertificate {
  /** PEM. */
  readonly key: string;
  /** PEM; its own CA. */
  readonly cert: string;
  /** Where the certificate is written, for NODE_EXTRA_CA_CERTS. */
  readonly certPath: string;
}

/** Writes a key and a one-day certificate for IP 127.0.0.1 into `folder`. */
export const loopbackCertificate = async (folder: string): Promise<LoopbackCertificate> => {
  const keyPath = join(folder, 'loopback.key.pem');
  const certPath = join(folder, 'loopback.cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'pipe' },
  );
  return { key: await readFile(keyPath, 'utf8'), cert: await readFile(certPath, 'utf8'), certPath };
};
