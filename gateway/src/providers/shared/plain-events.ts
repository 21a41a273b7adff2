// Patterns for stream events that only stream text, in a provider's own layout: an event a pattern built from these
// matches is valid JSON by construction, so it is passed on without a parse (see the frame translators).

/** A JSON string: no raw control character, only JSON's escapes. */
export const JSON_STRING = String.raw`"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;

/** A JSON non-negative integer (no leading zero), as event indexes and sequence numbers are written. */
export const JSON_INT = String.raw`(?:0|[1-9]\d{0,15})`;

/** A predicate for events of the layout `pattern` describes; longer events are parsed whatever their layout. */
export function plainEvent(pattern: RegExp): (data: string) => boolean {
  return (data) => data.length < 4096 && pattern.test(data);
}
