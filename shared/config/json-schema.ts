// The configuration's JSON Schema for editors, generated from the zod schema it validates with.
import * as z from 'zod';
import { GatewayConfig } from './schema.js';

export const configJsonSchemaFile = 'gateway.config.schema.json';

export const configJsonSchema = (): string =>
  `${JSON.stringify(
    {
      ...z.toJSONSchema(GatewayConfig, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }),
      $id: 'https://approval-gateway.dev/schemas/gateway.config.schema.json',
      title: 'Approval Gateway configuration',
    },
    null,
    2,
  )}\n`;
