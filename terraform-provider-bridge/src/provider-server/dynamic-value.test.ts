import { decode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { conformObject } from './conform.js';
import { decodeDynamicValue, encodeDynamicValue, isUnknown, UNKNOWN } from './dynamic-value.js';
import { providerSchema } from './provider-schema-file.js';

describe('DynamicValue', () => {
  it('encodes unknown as cty does: msgpack fixext1, type 0', () => {
    const { msgpack } = encodeDynamicValue({ id: UNKNOWN, name: 'bot' });
    expect(msgpack.includes(Buffer.from([0xd4, 0x00, 0x00]))).toBe(true);
    expect(decodeDynamicValue({ msgpack })).toEqual({ id: UNKNOWN, name: 'bot' });
  });

  it('decodes refined unknowns (extension 12) as unknown, and null as null', () => {
    const refined = Buffer.from([0x81, 0xa2, 0x69, 0x64, 0xc7, 0x02, 0x0c, 0x81, 0x01]); // {id: ext12(...)}
    expect(isUnknown((decodeDynamicValue({ msgpack: refined }) as Record<string, unknown>).id)).toBe(true);
    expect(decodeDynamicValue({ msgpack: Buffer.from([0xc0]) })).toBeNull();
    expect(decodeDynamicValue(null)).toBeNull();
    expect(decode(encodeDynamicValue(null).msgpack)).toBeNull();
  });

  it('reads JSON when terraform sends no msgpack', () => {
    expect(decodeDynamicValue({ msgpack: Buffer.alloc(0), json: Buffer.from('{"a":1}') })).toEqual({ a: 1 });
  });

  it('shapes values as the schema object: every attribute, nothing extra, numbers from strings', () => {
    const attrs = providerSchema().resource_schemas.agentgw_policy.block.attributes;
    const shaped = conformObject({ id: 'p', monthly_budget: '12.5', extra: true, rules: { rpm: 5 } }, attrs);
    // every attribute of the schema (a field the contract adds included), unset ones null
    const unset = (a: typeof attrs) => Object.fromEntries(Object.keys(a).map((k) => [k, null]));
    expect(Object.keys(attrs)).toEqual(expect.arrayContaining(['id', 'tenant_id', 'monthly_budget', 'daily_budget', 'allowed_models', 'labels', 'rules']));
    expect(shaped).toEqual({ ...unset(attrs), id: 'p', monthly_budget: 12.5, rules: { ...unset(attrs.rules.nested_type!.attributes), rpm: 5 } });
  });
});
