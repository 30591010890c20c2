// `npm run config:schema`: writes gateway.config.schema.json from the configuration's zod schema.
import { writeFile } from 'node:fs/promises';
import { projectPath } from '../infra/paths.js';
import { configJsonSchema, configJsonSchemaFile } from '../shared/config/json-schema.js';

await writeFile(projectPath(configJsonSchemaFile), configJsonSchema());
process.stdout.write(`Wrote ${configJsonSchemaFile}\n`);
