import { Option, type Command } from 'commander';
import type { Attrs, Field, FieldShape, KindDescriptor } from '../kinds/descriptor.js';
import { camelCase } from '../kinds/values.js';
import { CliError } from '../errors.js';
import { collect, parseLabels, parseList, parseNullableNumber } from './flag-values.js';

/** One flag made from a field of a kind (or of one of its nested objects, such as a policy's rules). */
interface KindFlag {
  name: string;
  field: Field;
  /** The enclosing object field, for nested fields. */
  parent?: Field;
}

const kebab = (name: string) => name.replace(/_/g, '-');

/** A reference is named after the kind it points to (`policy_id` -> `--policy`); anything else after the field. */
function flagName(f: Field): string {
  if (f.references) return f.references;
  if (f.shape.type === 'map') return kebab(f.name.replace(/s$/, ''));
  return kebab(f.name);
}

function placeholder(f: Field): string {
  const s = f.shape;
  if (f.references) return 'id';
  if (isObjectList(s)) return 'json';
  if (s.type === 'list') return 'list';
  if (s.type === 'map') return 'key=value';
  if (s.type === 'object') return s.fields.map((c) => c.name).join('/');
  if (s.type === 'enum') return 'value';
  return s.type === 'number' ? 'number' : 'value';
}

/** What to type for the values that are not plain. */
function hint(f: Field): string {
  const s = f.shape;
  const parts: string[] = [];
  if (isObjectList(s)) return f.nullable ? ' (a JSON array; "none" = unset)' : ' (a JSON array)';
  if (s.type === 'list') parts.push('comma-separated');
  if (s.type === 'list' && f.nullable) parts.push('"all" = unset', '"none" = empty');
  else if (s.type === 'list') parts.push('"none" = empty');
  else if (f.nullable) parts.push('"none" = unset');
  if (s.type === 'map') parts.push('repeatable');
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

function expand(f: Field): KindFlag[] {
  // an object of plain values is one flag per value (a policy's rules); an object of numbers is one flag (3/300)
  if (f.shape.type === 'object' && !f.nullable && f.shape.fields.some((c) => c.shape.type !== 'number')) {
    return f.shape.fields.flatMap((c) => expand(c)).map((k) => ({ ...k, parent: k.parent ?? f }));
  }
  return [{ name: flagName(f), field: f }];
}

/** The flags of the kind's fields the create request carries, identity fields in `positional` left out. */
export function kindFlags(d: KindDescriptor, positional: readonly string[] = []): KindFlag[] {
  return d.fields.filter((f) => f.onCreate && !positional.includes(f.name)).flatMap(expand);
}

/** Declares the kind's flags: required fields as required options, booleans as --x / --no-x. */
export function addKindFlags(cmd: Command, flags: KindFlag[], opts: { requireRequired: boolean }): Command {
  for (const k of flags) {
    const { field: f } = k;
    const description = `${f.description ?? ''}${hint(f)}`;
    if (f.shape.type === 'boolean') {
      cmd.option(`--${k.name}`, description);
      cmd.option(`--no-${k.name}`, `the opposite of --${k.name}`);
      continue;
    }
    const option = new Option(`--${k.name} <${placeholder(f)}>`, description);
    if (f.shape.type === 'enum') option.choices([...f.shape.values]);
    if (f.shape.type === 'map') option.argParser(collect);
    if (opts.requireRequired && !f.optional && !k.parent) option.makeOptionMandatory();
    cmd.addOption(option);
  }
  return cmd;
}

/** `--retry-block 3/300`: the numbers of an object, in the contract's field order. */
function parseNumbers(flag: string, f: Field & { shape: { type: 'object' } }, value: string): Attrs {
  const parts = value.split('/');
  const numbers = parts.map(Number);
  if (parts.length !== f.shape.fields.length || parts.some((p) => p.trim() === '') || numbers.some((n) => !Number.isFinite(n))) {
    throw new CliError(`${flag} must be ${f.shape.fields.map((c) => c.name.toUpperCase()).join('/')} such as ${f.shape.fields.map((_, i) => [3, 300, 10][i] ?? 1).join('/')}, or "none"`);
  }
  return Object.fromEntries(f.shape.fields.map((c, i) => [c.name, numbers[i]]));
}

/** A list of objects (a policy's tool_rules): given as JSON on the command line. */
function isObjectList(s: FieldShape): boolean {
  return s.type === 'list' && s.item.type === 'object';
}

function parseJsonList(flag: string, f: Field, text: string): unknown {
  if (f.nullable && (text === 'none' || text === 'null')) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value)) return value;
  } catch {
    // said below
  }
  throw new CliError(`${flag} must be a JSON array such as '[{"tools":["Bash"],"when":{"command":"rm *"},"action":"deny"}]'${f.nullable ? ', or "none"' : ''}`);
}

function parseValue(flag: string, f: Field, shape: FieldShape, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (shape.type === 'boolean') return value;
  if (shape.type === 'map') return parseLabels(value as string[]);
  const text = String(value);
  if (isObjectList(shape)) return parseJsonList(flag, f, text);
  if (shape.type === 'list') return f.nullable && text === 'all' ? null : parseList(text);
  if (f.nullable && (text === 'none' || text === 'null')) return null;
  if (shape.type === 'number') return parseNullableNumber(flag, text);
  if (shape.type === 'object') return parseNumbers(flag, f as Field & { shape: { type: 'object' } }, text);
  return text;
}

/** The request body from the flags given (commander names them in camelCase); flags left out stay out. */
export function kindBody(flags: Record<string, unknown>, kinds: KindFlag[]): Attrs {
  const body: Attrs = {};
  for (const k of kinds) {
    const value = parseValue(`--${k.name}`, k.field, k.field.shape, flags[camelCase(k.name.replace(/-/g, '_'))]);
    if (value === undefined) continue;
    if (!k.parent) body[k.field.name] = value;
    else ((body[k.parent.name] ??= {}) as Attrs)[k.field.name] = value;
  }
  return body;
}
