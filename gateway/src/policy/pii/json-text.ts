/**
 * Tool-call arguments are JSON text. Scanning the raw text would see escapes ("\n4155552671" reads as a word) and
 * redacting it could cut an escape in half, so the strings of parsable JSON are handled decoded, each with the key
 * it sits under as its label (a value under "password" is a password).
 */
export type LabelledStringMap = (value: string, label: string | undefined) => string;

/** A JSON string literal, a number, or a bracket, colon or comma: the tokens of a JSON text but whitespace and literals. */
const TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\]:,]/g;

/** Numbers shorter than this hold no phone, card, account or id number. */
const NUMBER_TEXT_MIN = 7;

/**
 * Maps every string of a JSON text, keys included, as the text spells them: a repeated key's every value and a
 * `__proto__` key are read as any other (an upstream parser may keep the first value, merge them, or match keys without
 * case), and numbers long enough to be a phone or card number are read as their digits (a replaced number becomes a
 * string). Undefined when the text is not JSON; the input when nothing changed.
 */
export function mapJsonStrings(json: string, map: LabelledStringMap): string | undefined {
  try {
    JSON.parse(json);
  } catch {
    return undefined;
  }
  // The label of each open container (the key it sits under), and for objects the current key and whether one is due.
  const labels: Array<string | undefined> = [];
  const inObject: boolean[] = [];
  let key: string | undefined;
  let keyDue = false;
  let out: string[] | null = null;
  let copied = 0;
  const replace = (start: number, end: number, text: string) => {
    out ??= [];
    out.push(json.slice(copied, start), text);
    copied = end;
  };
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(json); m !== null; m = TOKEN.exec(json)) {
    const token = m[0];
    const start = m.index;
    const c = token.charCodeAt(0);
    if (c === 0x22 /* " */) {
      const value = token.indexOf('\\') === -1 ? token.slice(1, -1) : (JSON.parse(token) as string);
      const isKey = keyDue;
      const label = isKey ? undefined : inObject[inObject.length - 1] ? key : labels[labels.length - 1];
      const mapped = map(value, label);
      if (mapped !== value) replace(start, start + token.length, JSON.stringify(mapped));
      if (isKey) {
        key = value;
        keyDue = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      labels.push(inObject[inObject.length - 1] ? key : labels[labels.length - 1]);
      inObject.push(c === 0x7b);
      keyDue = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      labels.pop();
      inObject.pop();
      keyDue = false;
    } else if (c === 0x2c /* , */) {
      keyDue = inObject[inObject.length - 1] === true;
    } else if (c !== 0x3a /* : */ && token.length >= NUMBER_TEXT_MIN) {
      const label = inObject[inObject.length - 1] ? key : labels[labels.length - 1];
      const mapped = map(token, label);
      if (mapped !== token) replace(start, start + token.length, JSON.stringify(mapped));
    }
  }
  if (out === null) return json;
  (out as string[]).push(json.slice(copied));
  return (out as string[]).join('');
}
