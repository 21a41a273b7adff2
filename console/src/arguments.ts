/**
 * Characters a page would hide or reorder (controls, bidirectional overrides, zero-width and other invisible
 * characters, tags): a person approving a call must see every character of its arguments, so these are written as
 * escapes (`\u202e`). The CLI escapes the same set (cli/src/ui/approval-text.ts).
 */
const HIDDEN =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|[\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]|[\ud800-\udfff]/gu;

export function revealHidden(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/** The inside of a JSON string literal, hidden characters escaped too; each newline it holds ends a line. */
function stringText(text: string, indent: string): string {
  return `"${text
    .split('\n')
    .map((part) => revealHidden(JSON.stringify(part).slice(1, -1)))
    .join(`\\n\n${indent}    `)}"`;
}

function pretty(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => inner + pretty(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, v]) => `${inner}"${revealHidden(JSON.stringify(k).slice(1, -1))}": ${pretty(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  if (typeof value === 'string') return stringText(value, indent);
  return value === undefined ? 'null' : JSON.stringify(value);
}

/**
 * A call's arguments as people read them: pretty JSON, a string's lines on lines of their own (each ending with its
 * `\n`), hidden characters escaped. The page folds long lines (CSS) and never cuts them.
 */
export function argumentsText(args: unknown): string {
  return pretty(args, '');
}
