import type { PiiMatch } from '../pii-match.js';

const BEGIN = /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY( BLOCK)?-----/y;

function isBase64Body(c: number): boolean {
  return (
    (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) ||
    c === 43 || c === 47 || c === 61 || c === 32 || c === 9 || c === 10 || c === 13 || c === 92 || c === 58 || c === 45 || c === 44
  );
}

/** PEM private keys, from BEGIN to END; a key cut off before its END line is redacted to the end of its body. */
export function findPemPrivateKeys(text: string, out: PiiMatch[]): void {
  // END markers known to be absent: searching again for each BEGIN would make the scan quadratic.
  const missingEnds = new Set<string>();
  let at = text.indexOf('-----BEGIN ');
  while (at !== -1) {
    BEGIN.lastIndex = at;
    const m = BEGIN.exec(text);
    if (!m) {
      at = text.indexOf('-----BEGIN ', at + 11);
      continue;
    }
    const bodyStart = at + m[0].length;
    const endMarker = `-----END ${m[1]}PRIVATE KEY${m[2] ?? ''}-----`;
    const endAt = missingEnds.has(endMarker) ? -1 : text.indexOf(endMarker, bodyStart);
    if (endAt === -1) missingEnds.add(endMarker);
    let end: number;
    if (endAt !== -1) {
      end = endAt + endMarker.length;
    } else {
      end = bodyStart;
      // Headers such as "Proc-Type: 4,ENCRYPTED" and JSON-escaped newlines ("\n") are part of the body.
      while (end < text.length && isBase64Body(text.charCodeAt(end)) && !text.startsWith('-----', end)) end++;
      while (end > bodyStart && (text.charCodeAt(end - 1) === 92 || text.charCodeAt(end - 1) <= 32)) end--;
    }
    out.push({ type: 'secret', start: at, end });
    at = text.indexOf('-----BEGIN ', Math.max(end, at + 11));
  }
}
