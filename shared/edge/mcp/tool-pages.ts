// tools/list in pages (MCP pagination): a large catalog (GitHub's description gives 1,221 tools,
// 3.4 MB in one answer) reaches an agent a page at a time, each page naming the next by an opaque
// cursor. The cursor holds the name of the last tool listed, so a page follows on by name in the
// catalog's order: a configuration that changes between two pages neither repeats nor skips a tool
// that stayed. A cursor names nothing secret: it only says where in the agent's own list to go on.

/** Tools per page, the status tool included on the first. */
export const toolsPageSize = 100;

export const invalidToolsCursorMessage = 'Invalid cursor: use a nextCursor from tools/list.';

const cursorPrefix = 'after:';
/** Longer than any cursor the gateway writes (a tool name is at most 64 characters). */
const maxCursorLength = 200;

const cursorAfter = (name: string): string => Buffer.from(`${cursorPrefix}${name}`, 'utf8').toString('base64url');

/** The name a cursor continues after, or null when it is not one the gateway wrote. */
const nameAfter = (cursor: string): string | null => {
  if (cursor.length > maxCursorLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return text.startsWith(cursorPrefix) ? text.slice(cursorPrefix.length) : null;
};

export interface ToolsPage<Tool> {
  /** Whether this is the first page (the one that carries the status tool). */
  readonly first: boolean;
  readonly tools: readonly Tool[];
  readonly nextCursor: string | undefined;
}

/**
 * The page a cursor asks for, of tools sorted by name (the catalog's order); null for a cursor
 * the gateway did not write. `cursor` is the request's, unread: anything but a string is refused.
 */
export const toolsPage = <Tool extends { readonly name: string }>(
  sorted: readonly Tool[],
  cursor: unknown,
): ToolsPage<Tool> | null => {
  if (cursor !== undefined && typeof cursor !== 'string') return null;
  const after = cursor === undefined ? null : nameAfter(cursor);
  if (cursor !== undefined && after === null) return null;
  const start = after === null ? 0 : sorted.findIndex((tool) => tool.name > after);
  const first = after === null;
  const room = first ? toolsPageSize - 1 : toolsPageSize;
  const tools = start === -1 ? [] : sorted.slice(start, start + room);
  const last = tools.at(-1);
  const more = start !== -1 && start + room < sorted.length;
  return { first, tools, nextCursor: more && last !== undefined ? cursorAfter(last.name) : undefined };
};
