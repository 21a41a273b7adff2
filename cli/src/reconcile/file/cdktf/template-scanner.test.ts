import { describe, expect, it } from 'vitest';
import { parseTraversal, scanTemplate } from './template-scanner.js';

describe('scanTemplate', () => {
  it('splits text and interpolations, nested strings included', () => {
    expect(scanTemplate('${agentgw_tenant.acme.id}-p2')).toEqual([
      { kind: 'expr', source: 'agentgw_tenant.acme.id' },
      { kind: 'text', text: '-p2' },
    ]);
    expect(scanTemplate('${lower("Bot-${local.suffix}")}')).toEqual([{ kind: 'expr', source: 'lower("Bot-${local.suffix}")' }]);
    expect(scanTemplate('${ { a = "}" }.a }')).toEqual([{ kind: 'expr', source: '{ a = "}" }.a' }]);
  });

  it('keeps escaped $${ as text', () => {
    expect(scanTemplate('cost $${x}')).toEqual([{ kind: 'text', text: 'cost ${x}' }]);
    expect(scanTemplate('')).toEqual([{ kind: 'text', text: '' }]);
  });

  it('rejects an unterminated interpolation', () => {
    expect(() => scanTemplate('${var.x')).toThrow(/unterminated/);
  });
});

describe('parseTraversal', () => {
  it('reads names, indexes and keys', () => {
    expect(parseTraversal('agentgw_policy.p.rules.retry_block.max_repeats')).toEqual(['agentgw_policy', 'p', 'rules', 'retry_block', 'max_repeats']);
    expect(parseTraversal('var.models[1]')).toEqual(['var', 'models', 1]);
    expect(parseTraversal('local.labels["team"]')).toEqual(['local', 'labels', 'team']);
  });

  it('returns null for anything that is not a plain traversal', () => {
    expect(parseTraversal('lower(var.x)')).toBeNull();
    expect(parseTraversal('var.a + 1')).toBeNull();
  });
});
