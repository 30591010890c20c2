// Decisions already made, for one configuration's policies. Cedar is deterministic and the policies
// are fixed for an engine's life, so a decision depends only on what Cedar is shown: the tool (the
// action, and its system as the resource), the agent's entity (id, groups, customer) and the
// context. Of the context, only the argument fields some policy reads can change a decision (all of
// them when a policy reads the arguments whole), so only those are part of the key: a tool whose
// policies read no field is decided once per agent. Bounded, least recently used forgotten first.
import type { CedarValueJson } from '@cedar-policy/cedar-wasm/nodejs';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool } from '../catalog/tool.js';
import { LruMap } from '../lru.js';

/** Decisions remembered per engine. */
export const decisionMemoEntries = 4096;
/** A key (mostly the fields policies read) longer than this is not remembered. */
const longestKey = 2048;

export class DecisionMemo<Decision> {
  private readonly entries = new LruMap<string, Decision>(decisionMemoEntries);
  /** The argument fields a decision depends on, sorted; 'all' when every field may matter. */
  private readonly fieldsRead: readonly string[] | 'all';

  constructor(argumentsRead: ReadonlySet<string> | 'all') {
    this.fieldsRead = argumentsRead === 'all' ? 'all' : [...argumentsRead].sort();
  }

  get size(): number {
    return this.entries.size;
  }

  /** What a decision depends on, as one string; null when too long to be worth remembering. */
  keyOf(
    tool: Pick<CatalogTool, 'name' | 'systemKey'>,
    agent: AgentIdentity,
    args: Readonly<Record<string, CedarValueJson>>,
  ): string | null {
    const read =
      this.fieldsRead === 'all'
        ? args
        : this.fieldsRead.flatMap((name) => (Object.hasOwn(args, name) ? [[name, args[name]]] : []));
    const key = JSON.stringify([tool.name, tool.systemKey, agent.id, agent.groups, agent.customerId, read]);
    return key.length > longestKey ? null : key;
  }

  get(key: string | null): Decision | undefined {
    return key === null ? undefined : this.entries.get(key);
  }

  remember(key: string | null, decision: Decision): void {
    if (key !== null) this.entries.set(key, decision);
  }
}
