// The local console's password check against the identities the configuration lists. Only the
// local runtime imports it (in AWS approvers sign in through OpenID Connect), so it never ships.
import { createHash } from 'node:crypto';
import type { Approver } from '../../shared/approvals/approver.js';
import type { ResolvedPerson } from '../../shared/config/resolved.js';
import { safeEqual } from '../../shared/sessions/session.js';

/** The result of a sign-in attempt with a password. */
export type PasswordCheck = { readonly ok: true; readonly approver: Approver } | { readonly ok: false };

const digest = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64url');

/**
 * Checks an approver's id and password against the configured identities. The comparison takes
 * the same time whether the id exists or not, and whichever part is wrong.
 */
export const checkPassword = (people: readonly ResolvedPerson[], id: string, password: string): PasswordCheck => {
  const person = people.find((candidate) => candidate.id === id.trim());
  const expected = digest(person?.password ?? `no such approver ${randomFiller}`);
  const matches = safeEqual(expected, digest(password));
  if (person === undefined || !matches) return { ok: false };
  return { ok: true, approver: { id: person.id, name: person.name, groups: person.groups } };
};

const randomFiller = createHash('sha256').update(String(Math.random())).digest('hex');
