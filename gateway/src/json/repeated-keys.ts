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
