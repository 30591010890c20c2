// What the operator reviewed of an MCP server's tools, pinned when the gateway first sees each one:
// its access as the gateway derived it, its title and description, and a fingerprint of its
// schemas. A server's annotations and texts are the server's word, not the operator's: whoever
// controls the server can flip `readOnlyHint` or rewrite a description at any refresh. So a later
// change to any of them lowers nothing on its own: until the operator accepts it, the tool is a
// write (whatever its hint or the configuration's `access` says) and agents are offered the title
// and description that were reviewed. Its new schemas are taken, since the server checks its calls
// against them; the approver sees every argument.
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { canonicalJsonText } from '../wire/exact-json.js';
import type { ToolServerToolSpec } from './tool-server-tools.js';

/** One tool as the operator reviewed it, by its name on its server. */
const ToolPin = z.object({
  name: z.string(),
  access: z.enum(['read', 'write']),
  title: z.string().optional(),
  description: z.string().optional(),
  /** SHA-256 of the input and output schemas as the gateway takes them (RFC 8785 text), in hex. */
  schemas: z.string().regex(/^[0-9a-f]{64}$/),
});
type ToolPin = z.infer<typeof ToolPin>;

/** A system's pins, in the order the tools were first seen (a list: tool names are the server's text). */
export const McpPins = z.array(ToolPin);
export type McpPins = z.infer<typeof McpPins>;

/** What of a tool can change: its access, its title or description, its schemas. */
type PinnedPart = 'access' | 'text' | 'schemas';

/** A tool whose server changed what was reviewed. */
export interface ToolDrift {
  readonly tool: string;
  readonly changed: readonly PinnedPart[];
  /** Its access as reviewed, and as the server now says. */
  readonly pinnedAccess: 'read' | 'write';
  readonly listedAccess: 'read' | 'write';
  /** Its pin as it would be if accepted (tells one change from the next). */
  readonly listed: ToolPin;
}

export interface PinnedSpecs {
  /** The tools as agents are offered them: a changed one a write, with its reviewed texts. */
  readonly specs: readonly ToolServerToolSpec[];
  /** The pins with the tools seen for the first time added. */
  readonly pins: McpPins;
  /** Whether tools were seen for the first time (the pins need writing). */
  readonly added: boolean;
  readonly drift: readonly ToolDrift[];
}

const schemasFingerprint = (spec: ToolServerToolSpec): string =>
  createHash('sha256')
    .update(canonicalJsonText([spec.inputSchema, spec.outputSchema ?? null]))
    .digest('hex');

/** A tool's pin as its server lists it now. */
const pinOf = (spec: ToolServerToolSpec): ToolPin => ({
  name: spec.name,
  access: spec.access ?? 'write',
  ...(spec.title === undefined ? {} : { title: spec.title }),
  ...(spec.description === undefined ? {} : { description: spec.description }),
  schemas: schemasFingerprint(spec),
});

const changedParts = (pin: ToolPin, listed: ToolPin): PinnedPart[] => {
  const changed: PinnedPart[] = [];
  if (pin.access !== listed.access) changed.push('access');
  if (pin.title !== listed.title || pin.description !== listed.description) changed.push('text');
  if (pin.schemas !== listed.schemas) changed.push('schemas');
  return changed;
};

/**
 * The listed tools against their pins: none kept yet (undefined), every tool is seen for the first
 * time; pins that cannot be read (null), every tool is held as a write until they can.
 */
export const pinnedSpecs = (specs: readonly ToolServerToolSpec[], pins: McpPins | undefined | null): PinnedSpecs => {
  if (pins === null) {
    return {
      specs: specs.map((spec) => ({ ...spec, access: 'write', changed: true })),
      pins: [],
      added: false,
      drift: [],
    };
  }
  const byName = new Map((pins ?? []).map((pin) => [pin.name, pin]));
  const added: ToolPin[] = [];
  const drift: ToolDrift[] = [];
  const offered = specs.map((spec): ToolServerToolSpec => {
    const listed = pinOf(spec);
    const pin = byName.get(spec.name);
    if (pin === undefined) {
      byName.set(spec.name, listed);
      added.push(listed);
      return spec;
    }
    const changed = changedParts(pin, listed);
    if (changed.length === 0) return spec;
    drift.push({ tool: spec.name, changed, pinnedAccess: pin.access, listedAccess: listed.access, listed });
    const { title: _title, description: _description, ...rest } = spec;
    return {
      ...rest,
      ...(pin.title === undefined ? {} : { title: pin.title }),
      ...(pin.description === undefined ? {} : { description: pin.description }),
      access: 'write',
      changed: true,
    };
  });
  return { specs: offered, pins: [...(pins ?? []), ...added], added: added.length > 0, drift };
};

/** One line per changed tool, in the gateway's words, for the log and config:check. */
export const driftLine = (drift: ToolDrift): string => {
  const parts = drift.changed.map((part) => {
    if (part === 'access') return `access ${drift.pinnedAccess} → ${drift.listedAccess}`;
    return part === 'text' ? 'title or description' : 'input or output schema';
  });
  return `${JSON.stringify(drift.tool.slice(0, 80))}: ${parts.join(', ')} changed; held as a write with its reviewed text until accepted`;
};
