import type { PiiDetector, PiiMatch } from '../pii-match.js';

// AAA-GG-SSSS, not glued to other digits, letters or dashes (dates, ids and phone numbers are longer).
const DASHED = /(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-]|[.,]\d)/dg;
// Nine digits without dashes count only right after an SSN label.
const LABELLED =
  /(?:\bssn|social security(?: number| no\.?| #)?|sozialversicherungsnummer|n[uú]mero de seguro social)\s{0,3}[:#]?\s{0,3}(\d{3}) ?(\d{2}) ?(\d{4})(?![\w-]|[.,]\d)/dgi;

const MAYBE_DASHED = /\d{3}-\d{2}-\d{4}/;

/** SSA rules: area 000, 666 and 900-999, group 00 and serial 0000 are never issued. */
export function isSsn(area: string, group: string, serial: string): boolean {
  return area !== '000' && area !== '666' && area[0] !== '9' && group !== '00' && serial !== '0000';
}

function collect(re: RegExp, text: string, out: PiiMatch[]): void {
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const first = m.indices?.[1];
    const last = m.indices?.[3];
    if (!first || !last || !isSsn(m[1], m[2], m[3])) continue;
    out.push({ type: 'ssn', start: first[0], end: last[1] });
  }
}

export const ssnDetector: PiiDetector = {
  type: 'ssn',
  find(text, out) {
    if (MAYBE_DASHED.test(text)) collect(DASHED, text, out);
    if (/ssn|social security|sozialversicherung|seguro social/i.test(text)) collect(LABELLED, text, out);
  },
};
