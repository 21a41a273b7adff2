import { parseTraversal, scanTemplate } from './template-scanner.js';
import { ResolveError, type StackJson } from './stack-json.js';
import { findStringToken, isNumberToken } from './unresolved-tokens.js';

/** Tells whether an attribute is assigned by the server (so a reference to it has no value before apply). */
export type IsComputed = (resourceType: string, attribute: string) => boolean;

// Keys cdktf and terraform put in a resource body that are not attributes.
export const META_KEYS = new Set(['//', 'depends_on', 'provider', 'lifecycle', 'count', 'for_each', 'provisioner', 'connection']);

function describe(value: unknown): string {
  return Array.isArray(value) ? 'a list' : value === null ? 'null' : typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Resolves the references of a synthesized stack without terraform: `${agentgw_tenant.acme.id}`,
 * `${var.X}` (its default), `${local.X}`, inside whole values or string templates. Anything that needs
 * terraform to evaluate (functions, data sources, server-assigned attributes) is an error that says so.
 */
export class StackResolver {
  private readonly done = new Map<string, unknown>();
  private readonly inProgress = new Set<string>();

  public constructor(
    private readonly stack: StackJson,
    private readonly isComputed: IsComputed,
  ) {}

  /** The resolved value of one attribute of a resource body (null when unset, as terraform sees it). */
  public attribute(type: string, name: string, attribute: string): unknown {
    const body = this.stack.resource?.[type]?.[name];
    if (!body) throw new ResolveError(`refers to ${type}.${name}, which is not in the stack`);
    return this.memo(`${type}.${name}.${attribute}`, () => {
      if (attribute in body && !META_KEYS.has(attribute)) return this.value(body[attribute]);
      if (this.isComputed(type, attribute)) {
        throw new ResolveError(
          `refers to ${type}.${name}.${attribute}, which the server assigns on apply: only terraform can resolve it`,
        );
      }
      return null;
    });
  }

  /** Resolves every reference inside a JSON value. */
  public value(value: unknown): unknown {
    if (typeof value === 'string') return this.template(value);
    if (typeof value === 'number' && isNumberToken(value)) {
      throw new ResolveError('holds an unresolved cdktf number token: pass the value itself, not a token turned into a number');
    }
    if (Array.isArray(value)) return value.map((v) => this.value(v));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.templateKey(k), this.value(v)]));
    }
    return value;
  }

  private templateKey(key: string): string {
    const resolved = this.template(key);
    if (typeof resolved !== 'string') throw new ResolveError(`the key ${key} does not resolve to a string`);
    return resolved;
  }

  private template(s: string): unknown {
    const token = findStringToken(s);
    if (token) {
      throw new ResolveError(
        `holds the unresolved cdktf token ${token}: it was turned into text outside synthesis (e.g. JSON.stringify); pass the value itself`,
      );
    }
    const parts = scanTemplate(s);
    // A value that is a single interpolation keeps the type of what it refers to (number, list, map).
    if (parts.length === 1 && parts[0].kind === 'expr') return this.expression(parts[0].source);
    return parts
      .map((p) => {
        if (p.kind === 'text') return p.text;
        const v = this.expression(p.source);
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
        throw new ResolveError(`\${${p.source}} is ${describe(v)}, which cannot be part of a string`);
      })
      .join('');
  }

  private expression(source: string): unknown {
    const steps = parseTraversal(source);
    if (!steps) {
      throw new ResolveError(`\${${source}} needs terraform to evaluate; write the value itself or deploy the stack with terraform`);
    }
    const [head, ...rest] = steps;
    if (head === 'var') return this.walk(this.variable(rest[0]), rest.slice(1), source);
    if (head === 'local') return this.walk(this.local(rest[0]), rest.slice(1), source);
    if (typeof head === 'string' && head.startsWith('agentgw_') && typeof rest[0] === 'string' && typeof rest[1] === 'string') {
      return this.walk(this.attribute(head, rest[0], rest[1]), rest.slice(2), source);
    }
    throw new ResolveError(`\${${source}} refers to something outside the agentgw resources of this stack; only terraform can resolve it`);
  }

  private variable(name: unknown): unknown {
    const v = typeof name === 'string' ? this.stack.variable?.[name] : undefined;
    if (!v) throw new ResolveError(`refers to var.${String(name)}, which the stack does not declare`);
    if (!('default' in v)) throw new ResolveError(`refers to var.${String(name)}, which has no default (variables cannot be passed here)`);
    return this.memo(`var.${String(name)}`, () => this.value(v.default));
  }

  private local(name: unknown): unknown {
    const locals = this.stack.locals ?? {};
    if (typeof name !== 'string' || !(name in locals)) throw new ResolveError(`refers to local.${String(name)}, which the stack does not declare`);
    return this.memo(`local.${name}`, () => this.value(locals[name]));
  }

  private walk(value: unknown, steps: Array<string | number>, source: string): unknown {
    let v = value;
    for (const step of steps) {
      if (v === null || v === undefined) return null;
      if (typeof step === 'number' && Array.isArray(v)) v = v[step];
      else if (typeof step === 'string' && typeof v === 'object' && !Array.isArray(v)) v = (v as Record<string, unknown>)[step] ?? null;
      else throw new ResolveError(`\${${source}}: cannot take ${String(step)} of ${describe(v)}`);
    }
    return v ?? null;
  }

  private memo(key: string, compute: () => unknown): unknown {
    if (this.done.has(key)) return this.done.get(key);
    if (this.inProgress.has(key)) throw new ResolveError(`${key} refers to itself through a cycle of references`);
    this.inProgress.add(key);
    try {
      const v = compute();
      this.done.set(key, v);
      return v;
    } finally {
      this.inProgress.delete(key);
    }
  }
}
