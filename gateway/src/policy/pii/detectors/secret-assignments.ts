import type { PiiMatch } from '../pii-match.js';
import { isWhitespace } from './chars.js';
import { looksRandom } from './entropy.js';

/**
 * `password = …`, `"api_key": "…"`, `DB_PASSWORD=…`, `Passwort: …`: a credential label, an optional suffix such as
 * `_hash` or `_access_key`, then `=`, `:`, `=>` or `:=`. The value is read by hand after the match.
 */
const LABEL =
  /(?:pass(?:word|wd|phrase)?|pwd|passwort|kennwort|mot[ _]de[ _]passe|contrase[ñn]a|パスワード|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key|client[_-]?secret|credentials?)(?:[_.-][A-Za-z0-9_.-]{0,20})?(?:\\?["'`])?\s{0,3}(?:=>|:=|[:=＝：])[ \t]{0,3}/gi;

const MAX_VALUE = 256;

// Template slots, masks, environment lookups and redaction markers are not secrets.
const PLACEHOLDER =
  /^(?:<.*>|\{.*\}|\[.*\]|\$\{?[\w.]+\}?|%\w+%|\*+|x{3,}|\.{3,}|(?:your|insert|enter|replace|put)[\w-]*|.*(?:example|placeholder|changeme|change_me|redacted|dummy|sample|xxxx).*|(?:process\.env|os\.environ|os\.getenv|env)\b.*|true|false|null|none|nil|undefined)$/i;

/**
 * Made-up values of documentation and examples: lower-case words that name the thing itself ("secret123",
 * "my-top-secret", "fallback-password", "pass"), and prose about where the value comes from.
 */
const NAMED_PLACEHOLDER = /^(?:[a-z]+[-_])*[a-z]*(?:secret|password|passwd|pass|token|apikey|key)(?:[-_][a-z0-9]+)*\d*$/;
const DESCRIBED = /\s.*\b(?:env|environment|defaults?|variable)\b/i;
// Words of a sentence about a credential ("Enter passphrase for …", "my awesome password"), not of one.
const PROSE_VALUE = /\s/;
const PROSE_WORD = /(?:^|\s)(?:enter|your|my|the|for|of|here|pass(?:word|phrase)?|secret|token|key)(?=\s|$)/i;

function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value) || NAMED_PLACEHOLDER.test(value) || DESCRIBED.test(value) || (PROSE_VALUE.test(value) && PROSE_WORD.test(value));
}

/** `badge.svg?token=…`: the read-only token of a coverage badge, published in READMEs on purpose. */
function isBadgeToken(text: string, labelStart: number): boolean {
  const before = text.slice(Math.max(0, labelStart - 8), labelStart);
  return /\.(?:svg|png)\?$/i.test(before);
}

// A member access, call or indexing in code (`config.apiKey`, `getenv("X")`, `form['password']`).
const CODE_REFERENCE = /^[A-Za-z_$][\w$]*(?:(?:\.|\?\.|::|->)[A-Za-z_$][\w$]*)*(?:\(.*|\[.*)?$/;

function isCodeReference(value: string): boolean {
  if (!CODE_REFERENCE.test(value)) return false;
  // A bare identifier with digits ("hunter22") reads as a password; a dotted or called one, or one without digits, as code.
  return /[.([:>]/.test(value) || !/\d/.test(value);
}

function readQuoted(text: string, open: number, quote: string): [number, number] | undefined {
  const window = text.slice(open + quote.length, open + quote.length + MAX_VALUE + quote.length);
  const close = window.indexOf(quote);
  if (close <= 0) return undefined;
  let inner = window.slice(0, close);
  if (inner.includes('\n')) return undefined;
  // An escaped quote ends the window early; keep the backslash outside so the escape stays whole.
  while (inner.endsWith('\\')) inner = inner.slice(0, -1);
  return inner.length > 0 ? [open + quote.length, open + quote.length + inner.length] : undefined;
}

function readValue(text: string, from: number): [number, number] | undefined {
  const quote = text[from];
  if (quote === '"' || quote === "'" || quote === '`') return readQuoted(text, from, quote);
  // A value inside a JSON-encoded string: \"...\"
  if (quote === '\\' && (text[from + 1] === '"' || text[from + 1] === "'")) return readQuoted(text, from, `\\${text[from + 1]}`);
  let end = from;
  const limit = Math.min(text.length, from + MAX_VALUE);
  while (end < limit) {
    const c = text.charCodeAt(end);
    // Stop at whitespace, quotes, separators and backslashes (so a JSON-escaped string is never cut mid-escape).
    if (isWhitespace(c) || c === 34 || c === 39 || c === 96 || c === 44 || c === 59 || c === 92 || c === 60 || c === 62) break;
    end++;
  }
  while (end > from && ')]}.'.includes(text[end - 1])) end--;
  return end > from ? [from, end] : undefined;
}

export function isSecretValue(value: string): boolean {
  if (value.length < 8) return false;
  if (isPlaceholder(value)) return false;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return false;
  if (isCodeReference(value)) return false;
  return looksRandom(value, 8);
}

export function findSecretAssignments(text: string, out: PiiMatch[]): void {
  LABEL.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = LABEL.exec(text)) !== null) {
    const span = readValue(text, m.index + m[0].length);
    if (!span || isBadgeToken(text, m.index)) continue;
    if (isSecretValue(text.slice(span[0], span[1]))) out.push({ type: 'secret', start: span[0], end: span[1] });
    // The next label is looked for after this value, so each character is read as a value at most once.
    LABEL.lastIndex = Math.max(LABEL.lastIndex, span[1]);
  }
}

function isUserInfoChar(c: number): boolean {
  return !(isWhitespace(c) || c === 47 || c === 63 || c === 35 || c === 64 || c === 34 || c === 39 || c === 60 || c === 62);
}

/** `scheme://user:password@host`: the user-info is redacted when it carries a password. */
export function findUrlCredentials(text: string, out: PiiMatch[]): void {
  let at = text.indexOf('://');
  while (at !== -1) {
    const start = at + 3;
    let end = start;
    const limit = Math.min(text.length, start + MAX_VALUE);
    while (end < limit && isUserInfoChar(text.charCodeAt(end))) end++;
    if (text.charCodeAt(end) === 64) {
      const userInfo = text.slice(start, end);
      const colon = userInfo.indexOf(':');
      const password = colon === -1 ? '' : userInfo.slice(colon + 1);
      // A redaction marker has a colon too; it is never user:password.
      const marker = userInfo.includes('[REDACTED:');
      if (colon > 0 && password.length > 0 && !marker && !isPlaceholder(password) && !/^[:*]+$/.test(password)) {
        out.push({ type: 'secret', start, end });
      }
    }
    at = text.indexOf('://', Math.max(end, at + 3));
  }
}
