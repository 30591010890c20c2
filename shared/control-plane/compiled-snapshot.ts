// The deployed functions' snapshot, loaded from what config:push compiled: the configuration's
// data checked and its references resolved from this function's environment (the same rule as
// the local runtime's, resolve.ts), the catalog as pushed, each tool's validator instantiated
// from its generated code, the policies compiled against the catalog. Nothing here parses YAML
// or OpenAPI or compiles a JSON Schema.
import { instantiateValidator } from '../arguments/standalone-validators.js';
import type { ArgumentsValidator, ToolWithValidator } from '../catalog/tool.js';
import { type LoadOptions, resolveConfigData } from '../config/resolve.js';
import { type ConfigProblem, formatPath } from '../config/resolved.js';
import { type CompiledSnapshot, type CompiledTool, type ConfigBundle, decodeCompiledSnapshot } from './bundle.js';
import { assembleSnapshot, type SnapshotLoad } from './gateway-snapshot.js';

/** What the operator does about a compiled snapshot the functions cannot take. */
export const pushAgain = 'run `npm run config:push` again';

/** A bundle's compiled snapshot, decoded and checked to be the bundle's own. */
export const decodeBundleSnapshot = (
  bundle: ConfigBundle,
): { ok: true; compiled: CompiledSnapshot } | { ok: false; problems: ConfigProblem[] } => {
  const refused = (message: string) => ({
    ok: false as const,
    problems: [{ file: bundle.config_file, path: '', line: null, message }],
  });
  const decoded = decodeCompiledSnapshot(bundle.compiled);
  if (!decoded.ok) return refused(`${decoded.reason}; ${pushAgain}`);
  if (decoded.compiled.version !== bundle.version) {
    return refused(
      `its compiled snapshot is of version ${decoded.compiled.version}, not the bundle's ${bundle.version}; ${pushAgain}`,
    );
  }
  return decoded;
};

export const loadCompiledSnapshot = (
  bundle: ConfigBundle,
  environment: Readonly<Record<string, string | undefined>>,
  options: Pick<LoadOptions, 'secrets'> = {},
): SnapshotLoad => {
  const decoded = decodeBundleSnapshot(bundle);
  return decoded.ok ? loadDecodedSnapshot(bundle, decoded.compiled, environment, options) : decoded;
};

/** The snapshot of a decoded compiled snapshot, its references resolved as `options` say. */
export const loadDecodedSnapshot = (
  bundle: ConfigBundle,
  compiled: CompiledSnapshot,
  environment: Readonly<Record<string, string | undefined>>,
  options: Pick<LoadOptions, 'secrets'> = {},
): SnapshotLoad => {
  const file = bundle.config_file;
  const lines = compiled.reference_lines;
  const resolved = resolveConfigData(compiled.config, {
    file,
    environment,
    options: { ...options, deployed: true },
    lineAt: (path) => {
      const key = formatPath(path);
      return Object.hasOwn(lines, key) ? (lines[key] ?? null) : null;
    },
  });
  if (!resolved.ok) return resolved;

  const problems: ConfigProblem[] = [];
  // Tools with the same schema share one validator.
  const validators = new Map<string, ArgumentsValidator>();
  const withValidators = (tools: readonly CompiledTool[]): ToolWithValidator[] =>
    tools.flatMap(({ validator: code, ...tool }) => {
      let validate = validators.get(code);
      if (validate === undefined) {
        const instance = instantiateValidator(code);
        if (!instance.ok) {
          problems.push({
            file,
            path: '',
            line: null,
            message: `the validator of ${tool.name} is refused: ${instance.reason}; ${pushAgain}`,
          });
          return [];
        }
        validate = instance.validate;
        validators.set(code, validate);
      }
      return [{ ...tool, validate }];
    });
  const tools = withValidators(compiled.tools);
  const disabled = withValidators(compiled.disabled);
  if (problems.length > 0) return { ok: false, problems };
  return assembleSnapshot({
    version: compiled.version,
    file,
    config: resolved.config,
    tools,
    disabled,
    policies: compiled.policies,
    checked: compiled.policy_set,
    ...(compiled.known_decisions === undefined ? {} : { known: compiled.known_decisions }),
    warnings: compiled.warnings,
    source: bundle.config_text,
    files: new Map(Object.entries(bundle.files)),
  });
};
