import { Option, type Command } from 'commander';
import { AUDIT_OBJECT_KINDS } from '@agentgw/gateway/contract';
import type { AuditEntry, AuditQuery } from '../admin-client/types.js';
import { act } from '../run-action.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { note } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';
import { parseInteger, parseTime } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
  since?: string;
  until?: string;
  actor?: string;
  kind?: AuditQuery['kind'];
  object?: string;
  tenant?: string;
  limit?: string;
  cursor?: string;
}

/** What a write changed, in a few words: the top-level fields whose values differ (the update time aside). */
export function changedFields(e: Pick<AuditEntry, 'before' | 'after'>): string {
  if (!e.before) return e.after ? 'created' : '-';
  if (!e.after) return 'deleted';
  const before = e.before;
  const after = e.after;
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => k !== 'updated_at');
  const changed = keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  return changed.length === 0 ? 'unchanged' : changed.join(', ');
}

export async function auditCommand(flags: Flags): Promise<number> {
  const query: AuditQuery = {
    since: parseTime('--since', flags.since),
    until: parseTime('--until', flags.until),
    actor: flags.actor,
    kind: flags.kind,
    object_id: flags.object,
    tenant_id: flags.tenant,
    limit: parseInteger('--limit', flags.limit, 1, 500),
    cursor: flags.cursor,
  };
  const page = await connect(flags).listAudit(query);
  renderTable(
    page.data,
    [
      { header: 'AT', value: (e) => e.at },
      { header: 'ACTOR', value: (e) => e.actor.name },
      { header: 'ACTION', value: (e) => e.action },
      { header: 'OBJECT', value: (e) => e.object.id },
      { header: 'CHANGED', value: changedFields },
    ],
    outputMode(flags),
  );
  if (page.next_cursor) note(`More entries: agentgw audit --cursor ${page.next_cursor} (with the same filters)`);
  return 0;
}

export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description('who changed what and when: the audit log of admin writes, newest first')
    .option('--since <time>', 'entries at or after this RFC 3339 time')
    .option('--until <time>', 'entries before this RFC 3339 time')
    .option('--actor <id-or-name>', "only this admin key's (or person's) writes")
    .addOption(new Option('--kind <kind>', 'only writes of this kind of object').choices([...AUDIT_OBJECT_KINDS]))
    .option('--object <id>', 'only writes of this object')
    .option('--tenant <id>', "only this tenant's objects")
    .option('--limit <n>', 'how many (1-500, default 50)')
    .option('--cursor <cursor>', 'the next page, as printed after a full page')
    .option('--json', 'print the entries as JSON (before and after in full)')
    .action(act(auditCommand));
}
