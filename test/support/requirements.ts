// Tests cite the rules of the requirements manifest (test/requirements.yaml) through verifies(),
// which checks each id while the test is being registered: a typo or a rule that is only planned
// fails the file at once, naming the id, instead of silently citing nothing.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import * as z from 'zod';
import { projectPath } from '../../infra/paths.js';

/** The id form rules use: dotted lowercase words, e.g. `result.fields-always-present`. */
const requirementId = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

const Manifest = z.array(
  z.object({
    id: z.string().regex(requirementId),
    source: z.string().min(1),
    rule: z.string().min(10),
    // A planned rule is listed before it is built, so the checklist shows it; no test may cite it yet.
    status: z.enum(['built', 'planned']).default('built'),
  }),
);
export type Manifest = z.infer<typeof Manifest>;

export const manifestFile = projectPath('test/requirements.yaml');

/** Reads and checks a manifest; synchronous because test titles are computed while tests register. */
export const readManifest = (file: string): Manifest => Manifest.parse(parse(readFileSync(file, 'utf8')));

/** One rule id, or several when a test covers more than one rule. */
export type Citation = string | readonly string[];

export type Verifies = (ids: Citation, title: string) => string;

/**
 * A verifies() bound to one manifest file, read at the first call and kept for the rest of the
 * worker. Separate from the exported verifies so the helper's own tests can give it a small manifest.
 */
export const verifiesFrom = (file: string): Verifies => {
  let statuses: Map<string, Manifest[number]['status']> | undefined;
  return (ids, title) => {
    statuses ??= new Map(readManifest(file).map((entry) => [entry.id, entry.status]));
    const list: readonly string[] = typeof ids === 'string' ? [ids] : ids;
    if (list.length === 0) throw new Error(`verifies() needs at least one requirement id (test "${title}")`);
    for (const id of list) {
      const status = statuses.get(id);
      if (status === undefined) {
        throw new Error(`verifies(): "${id}" is not a requirement listed in ${file} (test "${title}")`);
      }
      if (status === 'planned') {
        throw new Error(
          `verifies(): "${id}" is listed as planned in ${file}, so no test may verify it yet (test "${title}")`,
        );
      }
    }
    // The ids stay in the title so test reports and -t filters still show which rule a test covers.
    return [...list.map((id) => `[${id}]`), title].join(' ');
  };
};

/**
 * The title of a test that verifies the given rules, e.g.
 * `it(verifies('result.is-error', 'marks failures as errors'), ...)` is titled
 * `[result.is-error] marks failures as errors`. Throws when an id is not listed or only planned.
 * Ids must be string literals (or an array literal of them): test/requirements.test.ts reads them
 * from the source to check that every built rule is cited.
 */
export const verifies: Verifies = verifiesFrom(manifestFile);
