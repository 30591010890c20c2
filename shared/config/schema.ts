// The gateway configuration file (gateway.config.yaml): its zod schema is the single source for
// validation, for the types the runtime uses and for the JSON Schema published to editors.
import { z } from 'zod';
import { Duration } from './duration.js';

const secretReference = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** A secret: `${env:NAME}` (resolved when the file is loaded) or, for demos, the literal value. */
export const Secret = z
  .string()
  .min(1)
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ${env:NAME} is the configuration file's own syntax.
  .meta({ description: 'A secret: ${env:NAME} to read it from the environment, or a literal value (demo only).' })
  .transform((text) => {
    const match = secretReference.exec(text);
    return match?.[1] === undefined
      ? ({ kind: 'literal', value: text } as const)
      : ({ kind: 'env', name: match[1] } as const);
  });
export type SecretRef = z.output<typeof Secret>;

const identifier = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'expected lowercase letters, digits, "_", "." or "-" (at most 64)');

export const Settings = z
  .object({
    enabled: z.boolean().default(true).describe('When false, agents see only get_execution_status.'),
    approval_time: Duration.prefault('24h').describe('How long a held call waits for a decision before it expires.'),
    allowed_staleness: Duration.prefault('15m').describe(
      'How old the last good configuration load may be before the gateway stops offering tools.',
    ),
    public_url: z.url().optional().describe('Base URL used in links (console, approval_url).'),
  })
  .strict();

export const Agent = z
  .object({
    id: identifier.describe('The agent id, as policies and executions name it.'),
    token: Secret.describe('The bearer token this agent presents locally.'),
    groups: z.array(identifier).default([]).describe('Groups the agent belongs to (policies may test them).'),
    customer: z.string().min(1).optional().describe('The customer this agent acts for, if it is an outside agent.'),
  })
  .strict();

export const GatewayConfig = z
  .object({
    $schema: z.string().optional(),
    settings: Settings.prefault({}),
    agents: z.array(Agent).default([]).describe('Agent identities for the local runtime.'),
  })
  .strict()
  .superRefine((config, context) => {
    const seen = new Map<string, number>();
    config.agents.forEach((agent, index) => {
      const first = seen.get(agent.id);
      if (first !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['agents', index, 'id'],
          message: `agent id "${agent.id}" is already used by agents[${first}]`,
        });
      } else seen.set(agent.id, index);
    });
  });

export type GatewayConfigInput = z.input<typeof GatewayConfig>;
export type GatewayConfig = z.output<typeof GatewayConfig>;
