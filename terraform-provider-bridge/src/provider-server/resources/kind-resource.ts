import { ignoreNotFound, isAdminApiError, keyOf, type Attrs, type Field, type KindDescriptor } from '@agentgw/cli';
import type { TfObject, TfValue } from '../dynamic-value.js';
import { HandlerError, type ResourceHandler } from './resource-handler.js';
import { asObject, unsetIfDefault } from './unset-values.js';

const isUnset = (v: unknown) => v === null || v === undefined;

/**
 * A server value as state: objects with defaults field by field (a rule left unset stays unset), the whole object
 * null while it was unset and still holds only defaults; anything else through unsetIfDefault.
 */
function stateValue(f: Field, server: unknown, prior: TfValue | undefined): TfValue {
  if (f.shape.type === 'object' && asObject(f.default as TfValue) && asObject(server as TfValue)) {
    const priorObject = asObject(prior);
    const children = f.shape.fields.map((c) => [c.name, stateValue(c, (server as Attrs)[c.name], priorObject?.[c.name])] as const);
    if (!priorObject && children.every(([, v]) => v === null)) return null;
    return Object.fromEntries(children);
  }
  // The objects of a list (a route's targets): an attribute the configuration left unset stays unset while the server
  // holds its default (weight 1, priority 0), item by item.
  if (f.shape.type === 'list' && f.shape.item.type === 'object' && Array.isArray(server)) {
    const priorList = Array.isArray(prior) ? prior : [];
    const children = f.shape.item.fields;
    return server.map((item, i) => {
      const o = asObject(item as TfValue);
      if (!o) return item as TfValue;
      const priorItem = asObject(priorList[i]);
      return Object.fromEntries(
        Object.entries(o).map(([k, v]) => {
          const c = children.find((x) => x.name === k);
          return [k, c && c.default !== undefined ? unsetIfDefault(v, c.default, priorItem ? priorItem[k] : null) : (v as TfValue)];
        }),
      );
    });
  }
  return unsetIfDefault(server, f.default, prior);
}

/** Terraform's null is "unset": left out of a create body, the server's default applies. */
function withoutNulls(value: TfValue): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  const o = asObject(value);
  if (!o) return value;
  return Object.fromEntries(Object.entries(o).filter(([, v]) => !isUnset(v)).map(([k, v]) => [k, withoutNulls(v)]));
}

/** An unset attribute in an update is its default; objects field by field. */
function withDefaults(f: Field, value: TfValue | undefined): unknown {
  if (isUnset(value)) return f.default ?? null;
  // The objects of a list (a policy's tool_rules): an unset attribute is left out, as on create.
  if (f.shape.type === 'list' && f.shape.item.type === 'object') return withoutNulls(value as TfValue);
  const o = asObject(value as TfValue);
  if (f.shape.type === 'object' && o && asObject(f.default as TfValue)) {
    return Object.fromEntries(f.shape.fields.map((c) => [c.name, withDefaults(c, o[c.name])]));
  }
  return value;
}

/**
 * The admin-API side of one Terraform resource type, read from the kind's descriptor: its fields,
 * defaults, server-assigned fields and secrets. Attribute names are the contract's field names.
 */
export function kindResource(d: KindDescriptor): ResourceHandler {
  const noun = d.kind.charAt(0).toUpperCase() + d.kind.slice(1);
  // The server's id, or the identity for kinds the server names by it (a route by its alias).
  const idOf = (o: Attrs) => String(o.id ?? keyOf(d, o));

  function toState(entity: Attrs, prior: TfObject | null, secrets: Attrs = {}): TfObject {
    const state: TfObject = {};
    for (const f of d.fields) {
      const previous = prior?.[f.name];
      // an attribute left unset is not managed: the live value (an operator's suspension) never shows as drift
      state[f.name] = f.unmanagedWhenAbsent && isUnset(previous) ? null : stateValue(f, entity[f.name], previous);
    }
    for (const name of d.serverFields) state[name] = (entity[name] ?? null) as TfValue;
    for (const name of d.secrets) state[name] = (secrets[name] ?? prior?.[name] ?? null) as TfValue;
    return state;
  }

  function exists(key: string): HandlerError {
    return new HandlerError(
      `${noun} already exists`,
      `The ${d.kind} ${key} already exists. Import it with: terraform import ${d.terraformType}.NAME ${key}`,
    );
  }

  /** An object the admin interface cannot write (a route of the server config): terraform can neither create nor import it. */
  function readOnly(key: string, entity: Attrs): HandlerError {
    return new HandlerError(`${noun} is read-only`, `The ${d.kind} ${key} ${d.readOnlyReason(entity)}: change it there, or use another ${d.identity.join('/')}.`);
  }

  async function getOrNull(client: Parameters<ResourceHandler['read']>[0], id: string): Promise<Attrs | null> {
    try {
      return await d.api.get(client, id);
    } catch (e) {
      if (isAdminApiError(e) && e.status === 404) return null;
      throw e;
    }
  }

  return {
    async create(client, planned) {
      const key = keyOf(d, planned);
      // terraform creates only what it does not manage yet (a PUT would silently take an existing object over)
      const found = await d.api.find(client, key);
      if (found) throw d.readOnlyReason(found) ? readOnly(key, found) : exists(key);
      const body: Attrs = {};
      const later: Attrs = {};
      for (const f of d.fields) {
        if (isUnset(planned[f.name])) continue;
        const value = withoutNulls(planned[f.name]);
        if (f.onCreate) body[f.name] = value;
        else if (f.onUpdate) later[f.name] = value;
      }
      let created: Attrs;
      try {
        created = await d.api.create(client, body, key);
      } catch (e) {
        if (isAdminApiError(e) && e.status === 409) throw exists(key);
        throw e;
      }
      const entity = Object.keys(later).length > 0 ? await d.api.update(client, idOf(created), later) : created;
      return toState(entity, planned, created);
    },
    async read(client, prior) {
      const entity = await getOrNull(client, idOf(prior));
      return entity && toState(entity, prior);
    },
    async update(client, prior, planned) {
      const patch: Attrs = {};
      for (const f of d.fields) {
        if (!f.onUpdate || (f.unmanagedWhenAbsent && isUnset(planned[f.name]))) continue;
        patch[f.name] = withDefaults(f, planned[f.name]);
      }
      const entity = await d.api.update(client, idOf(prior), patch);
      return toState(entity, planned, { ...Object.fromEntries(d.secrets.map((s) => [s, prior[s]])) });
    },
    async delete(client, prior) {
      await ignoreNotFound(d.api.delete(client, idOf(prior)));
    },
    async importState(client, id) {
      // by server id, or by the identity the declarative file uses (`TENANT/NAME` for an agent)
      if (d.identity.length > 1 && id.includes('/')) {
        const found = await d.api.find(client, id);
        if (!found) throw new HandlerError(`${noun} not found`, `No ${d.kind} ${id} (${d.identity.join('/')}).`);
        return toState(found, null);
      }
      const entity = await d.api.get(client, id);
      if (d.readOnlyReason(entity)) throw readOnly(id, entity);
      return toState(entity, null);
    },
  };
}
