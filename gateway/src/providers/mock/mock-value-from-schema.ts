// A deterministic value that fits a JSON schema, for mock tool arguments and json_schema replies.

export function mockValueFromSchema(schema: unknown, text: string, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 8) return text;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('const' in s) return s.const;
  const variants = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(variants) && variants.length > 0) return mockValueFromSchema(variants[0], text, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      for (const [key, value] of Object.entries(properties)) out[key] = mockValueFromSchema(value, text, depth + 1);
      return out;
    }
    case 'array':
      return [mockValueFromSchema(s.items, text, depth + 1)];
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return text;
    default:
      return s.properties ? mockValueFromSchema({ ...s, type: 'object' }, text, depth) : text;
  }
}
