/**
 * Tool-call arguments are JSON text. Scanning the raw text would see escapes ("\n4155552671" reads as a word) and
 * redacting it could cut an escape in half, so the strings of parsable JSON are handled decoded, each with the key
 * it sits under as its label (a value under "password" is a password).
 */
export type LabelledStringMap = (value: string, label: string | undefined) => string;

/** Maps every string (keys included) of a JSON text; undefined when the text is not JSON, the input when nothing changed. */
export function mapJsonStrings(json: string, map: LabelledStringMap): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  let changed = false;
  const mapString = (s: string, label: string | undefined): string => {
    const mapped = map(s, label);
    if (mapped !== s) changed = true;
    return mapped;
  };
  // Iterative, so deeply nested arguments cannot overflow the stack.
  const root: { value: unknown } = { value: parsed };
  const stack: Array<{ holder: Record<string, unknown> | unknown[]; key: string | number; label: string | undefined }> = [
    { holder: root as unknown as Record<string, unknown>, key: 'value', label: undefined },
  ];
  while (stack.length > 0) {
    const { holder, key, label } = stack.pop()!;
    const value = (holder as Record<string | number, unknown>)[key];
    if (typeof value === 'string') {
      (holder as Record<string | number, unknown>)[key] = mapString(value, label);
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ holder: value, key: i, label });
    } else if (typeof value === 'object' && value !== null) {
      const source = value as Record<string, unknown>;
      const rebuilt: Record<string, unknown> = {};
      for (const k of Object.keys(source)) {
        const newKey = mapString(k, undefined);
        rebuilt[newKey] = source[k];
        stack.push({ holder: rebuilt, key: newKey, label: k });
      }
      (holder as Record<string | number, unknown>)[key] = rebuilt;
    }
  }
  return changed ? JSON.stringify(root.value) : json;
}
