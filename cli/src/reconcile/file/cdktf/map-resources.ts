import { KIND_LIST, kindOfTerraformType } from '../../../kinds/index.js';
import type { Section } from '../../../kinds/descriptor.js';
import { META_KEYS, StackResolver } from './stack-resolver.js';
import { ResolveError, type StackIssue, type StackJson } from './stack-json.js';

/** One converted resource, with the address it came from (for error messages). */
export interface MappedEntry {
  address: string;
  section: Section;
  value: Record<string, unknown>;
}

/** Attributes the server assigns (ids, key prefixes, secrets): a reference to one has no value before apply. */
function isComputed(type: string, attribute: string): boolean {
  const d = kindOfTerraformType(type);
  return d !== undefined && (d.readOnly.includes(attribute) || d.secrets.includes(attribute));
}

/** Terraform's null is "unset": the declarative file says the same by leaving the field out. */
function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, v && typeof v === 'object' && !Array.isArray(v) && k !== 'labels' ? withoutNulls(v as Record<string, unknown>) : v]),
  );
}

/** What the stack holds that `agentgw apply` cannot manage: other providers' resources, data sources, modules. */
function unsupported(stack: StackJson): StackIssue[] {
  const issues: StackIssue[] = [];
  for (const [type, byName] of Object.entries(stack.resource ?? {})) {
    if (kindOfTerraformType(type)) continue;
    for (const name of Object.keys(byName)) {
      issues.push({ address: `${type}.${name}`, message: 'is not an agentgw resource: deploy this stack with terraform instead' });
    }
  }
  for (const [type, byName] of Object.entries(stack.data ?? {})) {
    for (const name of Object.keys(byName)) {
      issues.push({ address: `data.${type}.${name}`, message: 'is a data source, which only terraform can read: deploy this stack with terraform instead' });
    }
  }
  for (const name of Object.keys(stack.module ?? {})) {
    issues.push({ address: `module.${name}`, message: 'is a module, which only terraform can expand: deploy this stack with terraform instead' });
  }
  return issues;
}

function metaIssues(address: string, body: Record<string, unknown>): StackIssue[] {
  const issues: StackIssue[] = [];
  if ('count' in body || 'for_each' in body) {
    issues.push({ address, message: 'uses count or for_each, which only terraform can expand: create one construct per object' });
  }
  if (typeof body.provider === 'string' && body.provider.includes('.')) {
    issues.push({ address, message: `uses the aliased provider ${body.provider}: agentgw apply manages one server, so deploy multi-server stacks with terraform` });
  }
  return issues;
}

/** Converts every agentgw resource of the stack, collecting one issue per bad attribute or resource. */
export function mapResources(stack: StackJson): { entries: MappedEntry[]; issues: StackIssue[] } {
  const resolver = new StackResolver(stack, isComputed);
  const entries: MappedEntry[] = [];
  const issues = unsupported(stack);
  for (const d of KIND_LIST) {
    for (const [name, body] of Object.entries(stack.resource?.[d.terraformType] ?? {})) {
      const address = `${d.terraformType}.${name}`;
      const before = issues.length;
      issues.push(...metaIssues(address, body));
      const value: Record<string, unknown> = {};
      for (const attribute of Object.keys(body).filter((k) => !META_KEYS.has(k))) {
        try {
          value[attribute] = resolver.attribute(d.terraformType, name, attribute);
        } catch (err) {
          if (!(err instanceof ResolveError)) throw err;
          issues.push({ address, message: `${attribute} ${err.message}` });
        }
      }
      if (issues.length > before) continue;
      const parsed = d.schemas.declared.safeParse(withoutNulls(value));
      if (!parsed.success) {
        for (const i of parsed.error.issues) issues.push({ address, message: `${i.path.join('.') || 'attributes'}: ${i.message}` });
        continue;
      }
      entries.push({ address, section: d.section, value: parsed.data as Record<string, unknown> });
    }
  }
  return { entries, issues };
}
