// The Mcp-Param-* headers of the 2026-07-28 revision (SEP-2243): declarations read from a tool's input schema, values
// encoded as the revision says and decoded back, and a client's headers checked against its arguments.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeMcpParamValue, encodeMcpParamValue, mcpParamDeclarations, mcpParamMismatch, paramHeaderValue } from './mcp-param-headers.js';

const SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    level: { type: 'integer', 'x-mcp-header': 'Level' },
    nested: { type: 'object', properties: { flag: { type: 'boolean', 'x-mcp-header': 'Flag' } } },
    listed: { type: 'array', items: { type: 'string', 'x-mcp-header': 'NotAHeader' } },
    spaced: { type: 'string', 'x-mcp-header': 'Not A Token' },
  },
};

describe('Mcp-Param-* headers', () => {
  test('declarations: properties reachable through properties only, with a valid header token', () => {
    expect(mcpParamDeclarations(SCHEMA).map((d) => [d.path.join('.'), d.headerName, d.type]).sort()).toEqual([
      ['level', 'Level', 'integer'],
      ['nested.flag', 'Flag', 'boolean'],
      ['region', 'Region', 'string'],
    ]);
    expect(mcpParamDeclarations(undefined)).toEqual([]);
  });

  test('an upstream schema nested 40,000 deep is walked to 16 levels only (no recursion, nothing past the bound)', () => {
    const deep = (levels: number, header: string) => {
      let node: Record<string, unknown> = { type: 'string', 'x-mcp-header': header };
      for (let i = 0; i < levels; i++) node = { type: 'object', properties: { p: node } };
      return node;
    };
    expect(mcpParamDeclarations(deep(40_000, 'Deep'))).toEqual([]);
    expect(mcpParamDeclarations(deep(3, 'Near')).map((d) => d.headerName)).toEqual(['Near']);
  });

  test('values: strings as they are, numbers in decimal, booleans lowercase; absent or null is no header', () => {
    const by = Object.fromEntries(mcpParamDeclarations(SCHEMA).map((d) => [d.headerName, d]));
    expect(paramHeaderValue(by.Flag!, { nested: { flag: true } })).toBe('true');
    expect(paramHeaderValue(by.Level!, { level: 42 })).toBe('42');
    expect(paramHeaderValue(by.Region!, { region: 'eu' })).toBe('eu');
    expect(paramHeaderValue(by.Region!, { region: null })).toBeUndefined();
    expect(paramHeaderValue(by.Region!, {})).toBeUndefined();
  });

  test('encoding: plain printable ASCII as is; anything else (and what looks encoded) in Base64, and decoded back', () => {
    expect(encodeMcpParamValue('eu-west-1')).toBe('eu-west-1');
    expect(encodeMcpParamValue('Zürich')).toBe(`=?base64?${Buffer.from('Zürich').toString('base64')}?=`);
    expect(encodeMcpParamValue(' padded')).toMatch(/^=\?base64\?/);
    expect(encodeMcpParamValue('=?base64?SGk=?=')).toMatch(/^=\?base64\?/);
    expect(decodeMcpParamValue('=?base64?SGVsbG8?=')).toBeUndefined();
    expect(decodeMcpParamValue('=?base64?SGVs!!!bG8=?=')).toBeUndefined();
    expect(decodeMcpParamValue('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
    expect(decodeMcpParamValue(encodeMcpParamValue('\uFEFFx'))).toBe('\uFEFFx');
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => decodeMcpParamValue(encodeMcpParamValue(s)) === s), { numRuns: 2000 });
  });

  test('a client whose header is missing, malformed or says another value is told which and what to send', () => {
    const decls = mcpParamDeclarations(SCHEMA);
    const headers = (h: Record<string, string>) => (name: string) => Object.entries(h).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
    expect(mcpParamMismatch(decls, { region: 'eu' }, headers({}))).toMatch(/Mcp-Param-Region header is absent/);
    expect(mcpParamMismatch(decls, { region: 'eu' }, headers({ 'mcp-param-region': 'us' }))).toMatch(/says "us".*region="eu"/);
    expect(mcpParamMismatch(decls, { region: 'Hello' }, headers({ 'Mcp-Param-Region': '=?base64?SGVsbG8?=' }))).toMatch(/not valid Base64/);
    expect(mcpParamMismatch(decls, { region: 'eu', level: 42 }, headers({ 'Mcp-Param-Region': 'eu', 'Mcp-Param-Level': '42.0' }))).toBeUndefined();
    expect(mcpParamMismatch(decls, { region: 'Zürich' }, headers({ 'Mcp-Param-Region': encodeMcpParamValue('Zürich') }))).toBeUndefined();
    // A value the body does not carry needs no header.
    expect(mcpParamMismatch(decls, {}, headers({}))).toBeUndefined();
  });
});
