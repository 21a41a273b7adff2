import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { StoredMcpCredential } from '../store.js';

function toCredential(r: Database['mcp_credentials']): StoredMcpCredential {
  return { agent_id: r.agent_id, server: r.server, sealed: r.sealed, header_names: JSON.parse(r.header_names) as string[], created_at: r.created_at, updated_at: r.updated_at };
}

export async function getMcpCredential(db: Kysely<Database>, agentId: string, server: string, lock = false): Promise<StoredMcpCredential | undefined> {
  const r = await db.selectFrom('mcp_credentials').selectAll().where('agent_id', '=', agentId).where('server', '=', server).$if(lock, (q) => q.forUpdate()).executeTakeFirst();
  return r && toCredential(r);
}

export async function putMcpCredential(db: Kysely<Database>, c: StoredMcpCredential): Promise<{ credential: StoredMcpCredential; created: boolean }> {
  const cols = { sealed: c.sealed, header_names: JSON.stringify(c.header_names), updated_at: c.updated_at };
  const updated = await db.updateTable('mcp_credentials').set(cols).where('agent_id', '=', c.agent_id).where('server', '=', c.server).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return { credential: (await getMcpCredential(db, c.agent_id, c.server))!, created: false };
  // A conflict is a concurrent PUT that created it first: update it instead.
  const inserted = await db
    .insertInto('mcp_credentials')
    .values({ agent_id: c.agent_id, server: c.server, ...cols, created_at: c.created_at })
    .onConflict((oc) => oc.columns(['agent_id', 'server']).doNothing())
    .executeTakeFirst();
  const created = Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  if (!created) await db.updateTable('mcp_credentials').set(cols).where('agent_id', '=', c.agent_id).where('server', '=', c.server).execute();
  return { credential: (await getMcpCredential(db, c.agent_id, c.server))!, created };
}

export async function deleteMcpCredential(db: Kysely<Database>, agentId: string, server: string): Promise<boolean> {
  const r = await db.deleteFrom('mcp_credentials').where('agent_id', '=', agentId).where('server', '=', server).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function listMcpCredentials(db: Kysely<Database>, agentId: string): Promise<StoredMcpCredential[]> {
  return (await db.selectFrom('mcp_credentials').selectAll().where('agent_id', '=', agentId).orderBy('server').execute()).map(toCredential);
}

/** An agent deleted takes its credentials with it. */
export async function deleteAgentMcpCredentials(db: Kysely<Database>, agentId: string): Promise<void> {
  await db.deleteFrom('mcp_credentials').where('agent_id', '=', agentId).execute();
}
