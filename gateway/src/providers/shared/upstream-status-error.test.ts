import { describe, expect, it } from 'vitest';
import { providerIdentity } from './provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from './sanitize-upstream-message.js';
import { retryAfterOf, upstreamStatusError } from './upstream-status-error.js';

const identity = providerIdentity('acme', 'openai-compatible', ['my-very-secret-key']);

describe('upstreamStatusError', () => {
  it.each([
    [429, 'upstream_rate_limited', true],
    [500, 'upstream_unavailable', true],
    [502, 'upstream_unavailable', true],
    [503, 'upstream_unavailable', true],
    [409, 'upstream_unavailable', true],
    [408, 'upstream_timeout', true],
    [400, 'validation_failed', false],
    [413, 'validation_failed', false],
    [422, 'validation_failed', false],
    [404, 'unknown_model', false],
    [401, 'upstream_bad_response', false],
    [403, 'upstream_bad_response', false],
    [402, 'upstream_bad_response', false],
  ])('HTTP %i -> %s', (status, code, retryable) => {
    const err = upstreamStatusError(identity, status, '{"error":{"message":"nope"}}');
    expect(err.code).toBe(code);
    expect(err.isRetryable).toBe(retryable);
    expect(err.message).toContain('"acme"');
    expect(err.message).toContain(String(status));
  });

  it('a 400 about an unknown model is unknown_model', () => {
    expect(upstreamStatusError(identity, 400, '{"error":{"message":"The model `foo` does not exist"}}').code).toBe('unknown_model');
    expect(upstreamStatusError(identity, 400, '{"error":{"message":"x","code":"model_not_found"}}').code).toBe('unknown_model');
  });

  it('ignores HTML error pages', () => {
    const err = upstreamStatusError(identity, 502, '<html><body>Bad gateway</body></html>');
    expect(err.message).toBe('Provider "acme" failed (HTTP 502).');
  });
});

describe('sanitizeUpstreamMessage', () => {
  it('removes configured secrets and key-shaped strings, and caps the length', () => {
    const text = `bad key my-very-secret-key, also sk-proj-abcdefghijklmnop and AIzaSyA1234567890abcdefghijkl and AKIAIOSFODNN7EXAMPLE ${'x'.repeat(500)}`;
    const clean = sanitizeUpstreamMessage(identity, text);
    expect(clean).not.toMatch(/my-very-secret-key|sk-proj-abc|AIzaSyA123|AKIAIOSFODNN7/);
    expect(clean.length).toBeLessThanOrEqual(300);
  });
});

describe('extractUpstreamMessage', () => {
  it.each([
    ['{"error":{"message":"a","param":"p","code":"c"}}', 'a'],
    ['{"type":"error","error":{"type":"invalid_request_error","message":"b"}}', 'b'],
    ['[{"error":{"code":400,"message":"c","status":"INVALID_ARGUMENT"}}]', 'c'],
    ['{"message":"d"}', 'd'],
    ['{"Message":"e"}', 'e'],
    ['{"detail":"f"}', 'f'],
    ['plain text g', 'plain text g'],
  ])('finds the sentence in %s', (body, message) => {
    expect(extractUpstreamMessage(body).message).toBe(message);
  });
});

describe('retryAfterOf', () => {
  it('reads seconds and HTTP dates, from header objects and raw header lists', () => {
    expect(retryAfterOf({ 'retry-after': '17' })).toBe('17');
    expect(retryAfterOf(['Content-Type', 'x', 'Retry-After', '5'])).toBe('5');
    expect(retryAfterOf({ 'retry-after': new Date(Date.parse('2026-01-01T00:00:30Z')).toUTCString() }, Date.parse('2026-01-01T00:00:00Z'))).toBe('30');
    expect(retryAfterOf({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterOf({})).toBeUndefined();
  });
});
