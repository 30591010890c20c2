// Tools with their arguments validator, as a snapshot holds them, for tests that build a tool or a
// schema by hand: the validator is compiled at first use, as the local runtime does.
import { compileValidator } from '../../shared/arguments/compile-validator.js';
import type { JsonObject, ToolWithValidator } from '../../shared/catalog/tool.js';

export const withValidator = <Tool extends { readonly inputSchema: JsonObject }>(
  tool: Tool,
): Tool & Pick<ToolWithValidator, 'validate'> => ({ ...tool, validate: compileValidator(tool.inputSchema) });
