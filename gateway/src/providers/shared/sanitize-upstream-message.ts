// Upstream error text is repeated to clients, so keys, tokens and markup are scrubbed and the length is capped.
import type { ProviderIdentity } from './provider-identity.js';

const MAX_LENGTH = 300;
// Shapes of well-known credentials: OpenAI/Anthropic/Groq keys, Google API keys, AWS access key ids, bearer tokens.
const KEY_PATTERNS = [
  /\b(sk|rk|pk|gsk|xai|sk-ant|sk-proj)[-_][A-Za-z0-9_\-*.]{8,}/g,
  /\bAIza[0-9A-Za-z_\-]{20,}/g,
  /\b(AKIA|ASIA)[0-9A-Z]{12,}/g,
  /\bBearer\s+[A-Za-z0-9._\-~+/]{8,}=*/gi,
];

export function sanitizeUpstreamMessage(identity: ProviderIdentity, text: string): string {
  let out = text;
  for (const secret of identity.secrets) {
    if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  for (const pattern of KEY_PATTERNS) out = out.replace(pattern, '[redacted]');
  out = out.replace(/\s+/g, ' ').trim();
  if (out.length > MAX_LENGTH) out = `${out.slice(0, MAX_LENGTH - 1)}…`;
  return out;
}

/** The human sentence inside an upstream error body, whatever the provider's error shape. */
export function extractUpstreamMessage(bodyText: string): { message: string; param: string | null; code: string | null } {
  const trimmed = bodyText.trim();
  if (trimmed === '') return { message: '', param: null, code: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    // HTML error pages say nothing useful and may be long; plain text is kept.
    return { message: trimmed.startsWith('<') ? '' : trimmed, param: null, code: null };
  }
  if (Array.isArray(parsed)) parsed = parsed[0];
  if (parsed === null || typeof parsed !== 'object') return { message: String(parsed), param: null, code: null };
  const o = parsed as Record<string, unknown>;
  const err = (typeof o.error === 'object' && o.error !== null ? o.error : o) as Record<string, unknown>;
  const param = typeof err.param === 'string' ? err.param : null;
  const code = [err.code, err.status, err.type].find((c): c is string => typeof c === 'string') ?? null;
  const message = sentence(err.message) || sentence(err.Message) || sentence(o.message) || sentence(o.error) || sentence(o.detail);
  return { message, param, code };
}

/** A message field as text: a string, or FastAPI-style validation details ({detail: [{msg, loc}]}) as used by vLLM and Mistral. */
function sentence(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (depth > 2 || value === null || typeof value !== 'object') return '';
  if (Array.isArray(value)) {
    return value
      .map((d) => {
        if (!d || typeof d !== 'object') return '';
        const item = d as { msg?: unknown; loc?: unknown };
        const where = Array.isArray(item.loc) ? item.loc.filter((l) => l !== 'body').join('.') : '';
        return typeof item.msg === 'string' ? (where ? `${where}: ${item.msg}` : item.msg) : '';
      })
      .filter(Boolean)
      .join('; ');
  }
  const v = value as Record<string, unknown>;
  return sentence(v.message, depth + 1) || sentence(v.detail, depth + 1);
}
