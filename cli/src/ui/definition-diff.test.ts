import { describe, expect, it } from 'vitest';
import { definitionDiff, lineDiff } from './definition-diff.js';

const base = {
  name: 'create_issue',
  status: 'changed' as const,
  withheld: true,
  digest: 'b'.repeat(64),
  pinned_digest: 'a'.repeat(64),
  pinned_at: '2026-01-01T00:00:00.000Z',
  pinned_by: null,
};

describe('definitionDiff', () => {
  it('shows only the parts that changed, as unified hunks over sorted, indented JSON', () => {
    const schema = { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } }, required: ['title'] };
    const lines = definitionDiff('github', {
      ...base,
      pinned_definition: { description: 'Creates an issue.', inputSchema: schema, annotations: null },
      definition: { description: 'Creates an issue.', inputSchema: { ...schema, properties: { ...schema.properties, token: { type: 'string' } } }, annotations: null },
    });
    expect(lines).toEqual([
      `--- github/create_issue inputSchema (pinned ${'a'.repeat(12)})`,
      `+++ github/create_issue inputSchema (listed now ${'b'.repeat(12)})`,
      '@@ -5,6 +5,9 @@',
      '     },',
      '     "title": {',
      '       "type": "string"',
      '+    },',
      '+    "token": {',
      '+      "type": "string"',
      '     }',
      '   },',
      '   "required": [',
    ]);
  });

  it('writes hidden characters (escape sequences, bidi overrides) as escapes', () => {
    const lines = definitionDiff('x', {
      ...base,
      pinned_definition: { description: 'Reads a file.', inputSchema: {}, annotations: null },
      definition: { description: 'Reads a file.\u001b[8m secretly\u202e', inputSchema: {}, annotations: null },
    });
    expect(lines).toContain('+Reads a file.\\u001b[8m secretly\\u202e');
    expect(lines.join('\n')).not.toMatch(/[\u001b\u202e]/);
  });

  it('is empty for a tool that did not change', () => {
    const d = { description: 'a', inputSchema: {}, annotations: null };
    expect(definitionDiff('x', { ...base, status: 'pinned', withheld: false, pinned_definition: null, definition: d })).toEqual([]);
    expect(lineDiff(['a', 'b'], ['a', 'b']).every((o) => o.kind === ' ')).toBe(true);
  });
});
