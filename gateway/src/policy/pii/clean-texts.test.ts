import { describe, expect, it, vi } from 'vitest';
import type { PiiType } from '../../contract/policies.js';

// Counts the detector's calls, so the tests can tell a remembered text from a scanned one.
vi.mock('./detect-pii.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./detect-pii.js')>();
  return { ...actual, detectPii: vi.fn(actual.detectPii) };
});
const { detectPii } = await import('./detect-pii.js');
const { scanRequestPii } = await import('./scan-request.js');

const SYSTEM = 'You are a careful assistant for the platform team. Answer in two sentences at most.';
const scans = () => vi.mocked(detectPii).mock.calls.length;

describe('scanRequestPii remembers texts it found clean', () => {
  it('scans a long clean text once per type list, and short texts every time', () => {
    const types: PiiType[] = ['email', 'phone'];
    const body = (user: string) => ({ messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: user }] });
    vi.mocked(detectPii).mockClear();
    expect(scanRequestPii(body('hi'), types)).toEqual([]);
    expect(scans()).toBe(2);
    expect(scanRequestPii(body('hi'), types)).toEqual([]);
    // The system prompt is remembered; the short user text is scanned again.
    expect(scans()).toBe(3);
    // Another type list has its own memory.
    expect(scanRequestPii(body('hi'), ['email'])).toEqual([]);
    expect(scans()).toBe(5);
  });

  it('remembers short clean texts of 8 characters or more (keys and ids with digits cost the detectors the most)', () => {
    const types: PiiType[] = ['email', 'phone', 'credit_card'];
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'clear_thinking_20251015' }] }] };
    expect(scanRequestPii(body, types)).toEqual([]);
    vi.mocked(detectPii).mockClear();
    expect(scanRequestPii(body, types)).toEqual([]);
    expect(scans()).toBe(0);
  });

  it('keeps a text in use while one-off texts come and go past the budget', () => {
    const types: PiiType[] = ['email'];
    const kept = `${SYSTEM} ${'again '.repeat(1_000)}`;
    expect(scanRequestPii({ messages: [{ role: 'system', content: kept }] }, types)).toEqual([]);
    // Three million characters of one-off texts: only they are scanned, the text in use never again.
    for (let i = 0; i < 300; i++) {
      vi.mocked(detectPii).mockClear();
      expect(scanRequestPii({ messages: [{ role: 'system', content: kept }, { role: 'user', content: `${'once '.repeat(2_000)}${i}` }] }, types)).toEqual([]);
      expect(scans()).toBe(1);
    }
  });

  it('never remembers a text with PII, and a text clean for one type list is still scanned for another', () => {
    const withPhone = `${SYSTEM} Call the on-call engineer at +1 415 555 2671 if the build breaks.`;
    const body = { messages: [{ role: 'user', content: withPhone }] };
    const emailOnly: PiiType[] = ['email'];
    const phone: PiiType[] = ['phone'];
    expect(scanRequestPii(body, emailOnly)).toEqual([]);
    expect(scanRequestPii(body, phone)).toEqual(['phone']);
    vi.mocked(detectPii).mockClear();
    expect(scanRequestPii(body, phone)).toEqual(['phone']);
    expect(scanRequestPii(body, phone)).toEqual(['phone']);
    expect(scans()).toBeGreaterThanOrEqual(2);
  });

  it('drops the least recently seen texts once the remembered ones pass their size budget, and keeps finding PII meanwhile', () => {
    const types: PiiType[] = ['email'];
    for (let i = 0; i < 200; i++) {
      const text = `${'step '.repeat(2_000)}${i}`;
      expect(scanRequestPii({ messages: [{ role: 'user', content: text }] }, types)).toEqual([]);
    }
    vi.mocked(detectPii).mockClear();
    // The first texts were dropped once the budget (about half a million characters a generation) was passed: scanned again.
    expect(scanRequestPii({ messages: [{ role: 'user', content: `${'step '.repeat(2_000)}0` }] }, types)).toEqual([]);
    expect(scans()).toBe(1);
    // The latest ones are still remembered.
    expect(scanRequestPii({ messages: [{ role: 'user', content: `${'step '.repeat(2_000)}199` }] }, types)).toEqual([]);
    expect(scans()).toBe(1);
    expect(scanRequestPii({ messages: [{ role: 'user', content: `${'step '.repeat(2_000)} mail me: a.b@example.com` }] }, types)).toEqual(['email']);
  });
});
