import { KIND_LIST } from '../../kinds/index.js';
import type { Attrs, KindClient, KindDescriptor } from '../../kinds/descriptor.js';
import type { LiveObjects } from '../state/normalise.js';

/** What the dump stage needs of the admin client. */
export type DumpClient = KindClient;

/** The tenant an object belongs to: a tenant is its own, others name it in their reference to a tenant. */
function tenantOf(d: KindDescriptor, o: Attrs): unknown {
  if (d.kind === 'tenant') return o.id;
  const ref = d.fields.find((f) => f.references === 'tenant');
  return ref ? o[ref.name] : undefined;
}

/** Every live object of every kind the admin key may see, all pages; `tenantId` keeps one tenant's. */
export async function dumpLive(client: DumpClient, opts: { tenantId?: string } = {}): Promise<LiveObjects> {
  const q = opts.tenantId ? { tenant_id: opts.tenantId } : {};
  const lists = await Promise.all(KIND_LIST.map((d) => d.api.list(client, q)));
  const out = Object.fromEntries(KIND_LIST.map((d) => [d.section, []])) as unknown as LiveObjects;
  KIND_LIST.forEach((d, i) => {
    out[d.section] = opts.tenantId ? lists[i].filter((o) => tenantOf(d, o) === opts.tenantId) : lists[i];
  });
  return out;
}
