// The deployed configuration: the configuration text with every file it names, as one bundle
// that `config:push` writes and the functions read (so AWS needs no file system).
import { z } from 'zod';

export const ConfigBundle = z.object({
  /** Content version of the snapshot the bundle builds (see loadSnapshot). */
  version: z.string().min(1),
  /** The configuration file's name, for messages. */
  config_file: z.string().min(1),
  config_text: z.string(),
  /** Files the configuration names, by their path relative to it. */
  files: z.record(z.string(), z.string()),
  pushed_at: z.iso.datetime(),
});
export type ConfigBundle = z.infer<typeof ConfigBundle>;

export type PushResult = { kind: 'pushed' } | { kind: 'unchanged' } | { kind: 'conflict'; current: string | null };

export interface ConfigBundleStore {
  fetch(): Promise<ConfigBundle | undefined>;
  /** Replaces the deployed bundle, only if the deployed version is still `expectedVersion` (null: none yet). */
  push(bundle: ConfigBundle, expectedVersion: string | null): Promise<PushResult>;
}
