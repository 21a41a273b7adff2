// Whether a JSON text repeats a key inside some object. JSON.parse keeps the last value; an upstream's parser may keep
// the first, or merge objects (Go's encoding/json), so bytes that repeat a key are never forwarded as received: the
// checks read the parsed value, and the upstream must read the same.

/** String literals and object braces: arrays, numbers and punctuation need no look. */
const TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"|[{}]/g;

/** True when some object of the JSON text `text` has a key twice (compared decoded: `"a"` and `"\u0061"` are one key). */
export function repeatsKey(text: string): boolean {
  const open: Array<Set<string>> = [];
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    const token = m[0];
    const c = token.charCodeAt(0);
    if (c === 0x7b /* { */) {
      open.push(new Set());
      continue;
    }
    if (c === 0x7d /* } */) {
      open.pop();
      continue;
    }
    // A key is a string followed by a colon.
    let i = TOKEN.lastIndex;
    let next = text.charCodeAt(i);
    while (next === 0x20 || next === 0x0a || next === 0x0d || next === 0x09) next = text.charCodeAt(++i);
    if (next !== 0x3a /* : */) continue;
    const keys = open[open.length - 1];
    if (keys === undefined) continue;
    const key = token.indexOf('\\') === -1 ? token : JSON.stringify(JSON.parse(token) as string);
    if (keys.has(key)) return true;
    keys.add(key);
  }
  return false;
}

/**
 * repeatsKey(text) for a text already parsed, `value` being JSON.parse(text), without reading a key: in JSON a colon
 * outside strings ends a key and nothing else, and JSON.parse gives each object one own key per distinct key, so the text
 * repeats a key exactly when it holds more such colons than the value holds keys. Several times faster than repeatsKey on
 * an agent's body, which is mostly long strings.
 */
export function repeatsKeyOf(text: string, value: unknown): boolean {
  return colonsOutsideStrings(text) > keysIn(value);
}

/** The colons of a JSON text outside its string literals. */
function colonsOutsideStrings(text: string): number {
  let count = 0;
  let colon = text.indexOf(':');
  let at = 0;
  for (;;) {
    const quote = text.indexOf('"', at);
    const stop = quote === -1 ? text.length : quote;
    while (colon !== -1 && colon < stop) {
      count++;
      colon = text.indexOf(':', colon + 1);
    }
    if (quote === -1 || colon === -1) return count;
    // The closing quote: the next one after an even number of backslashes.
    let end = text.indexOf('"', quote + 1);
    for (;;) {
      if (end === -1) return count;
      let b = end - 1;
      while (text.charCodeAt(b) === 0x5c /* \ */) b--;
      if ((end - 1 - b) % 2 === 0) break;
      end = text.indexOf('"', end + 1);
    }
    at = end + 1;
    // A colon inside the string is none.
    if (colon < at) colon = text.indexOf(':', at);
  }
}

/** The own keys of every object in a parsed JSON value, at any depth. */
function keysIn(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let count = 0;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const e: unknown = v[i];
        if (typeof e === 'object' && e !== null) stack.push(e);
      }
      continue;
    }
    const keys = Object.keys(v);
    count += keys.length;
    for (let i = 0; i < keys.length; i++) {
      const e: unknown = (v as Record<string, unknown>)[keys[i]!];
      if (typeof e === 'object' && e !== null) stack.push(e);
    }
  }
  return count;
}
