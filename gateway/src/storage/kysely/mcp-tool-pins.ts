import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { McpToolPinRecord } from '../store.js';

type Row = Database['mcp_tool_pins'];

function toRecord(r: Row): McpToolPinRecord {
  return { server: r.server, tool: r.tool, digest: r.digest, definition: JSON.parse(r.definition), pinned_at: r.pinned_at, pinned_by: r.pinned_by };
}

function toRow(p: McpToolPinRecord): Row {
  return { server: p.server, tool: p.tool, digest: p.digest, definition: JSON.stringify(p.definition), pinned_at: p.pinned_at, pinned_by: p.pinned_by };
}

export async function listMcpToolPins(db: Kysely<Database>, server?: string): Promise<McpToolPinRecord[]> {
  let q = db.selectFrom('mcp_tool_pins').selectAll();
  if (server !== undefined) q = q.where('server', '=', server);
  return (await q.orderBy('server').orderBy('tool').execute()).map(toRecord);
}

/** The first definition recorded wins: a pin already there (written by another node first) is kept and read back. */
export async function recordMcpToolPins(db: Kysely<Database>, pins: McpToolPinRecord[]): Promise<McpToolPinRecord[]> {
  if (pins.length === 0) return [];
  for (const p of pins) {
    await db.insertInto('mcp_tool_pins').values(toRow(p)).onConflict((oc) => oc.columns(['server', 'tool']).doNothing()).execute();
  }
  const rows = await db
    .selectFrom('mcp_tool_pins')
    .selectAll()
    .where('server', 'in', [...new Set(pins.map((p) => p.server))])
    .where('tool', 'in', pins.map((p) => p.tool))
    .execute();
  const wanted = new Set(pins.map((p) => `${p.server}\u0000${p.tool}`));
  return rows.filter((r) => wanted.has(`${r.server}\u0000${r.tool}`)).map(toRecord);
}

/** Replaces the pin of the tool with an accepted definition; answers the pin it replaced (undefined: none). */
export async function acceptMcpToolPin(db: Kysely<Database>, pin: McpToolPinRecord, lock: boolean): Promise<McpToolPinRecord | undefined> {
  let q = db.selectFrom('mcp_tool_pins').selectAll().where('server', '=', pin.server).where('tool', '=', pin.tool);
  if (lock) q = q.forUpdate();
  const before = await q.executeTakeFirst();
  const row = toRow(pin);
  if (before) {
    await db.updateTable('mcp_tool_pins').set({ digest: row.digest, definition: row.definition, pinned_at: row.pinned_at, pinned_by: row.pinned_by }).where('server', '=', pin.server).where('tool', '=', pin.tool).execute();
  } else {
    await db
      .insertInto('mcp_tool_pins')
      .values(row)
      .onConflict((oc) => oc.columns(['server', 'tool']).doUpdateSet({ digest: row.digest, definition: row.definition, pinned_at: row.pinned_at, pinned_by: row.pinned_by }))
      .execute();
  }
  return before ? toRecord(before) : undefined;
}
