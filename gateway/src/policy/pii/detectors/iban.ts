import { countrySpecs, validateIBAN, ValidationErrorsIBAN } from 'ibantools';
import type { PiiDetector, PiiMatch } from '../pii-match.js';
import { ibanChecksumValid } from './checksums.js';

/**
 * IBAN length per country, from ibantools' table of the IBAN registry (and of the countries that use IBANs outside it,
 * such as Iran): a maintained library, not a hand-kept list.
 */
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  Object.entries(countrySpecs).flatMap(([country, spec]) => (spec.chars ? [[country, spec.chars] as const] : [])),
);

/** ibantools checks the national check digits of some countries too; a mistyped account number is still one. */
const TOLERATED = new Set<ValidationErrorsIBAN>([ValidationErrorsIBAN.WrongAccountBankBranchChecksum, ValidationErrorsIBAN.QRIBANNotAllowed]);

// Country code, check digits, then the BBAN compact or in the printed groups of four.
const CANDIDATE = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,4})?(?![A-Za-z0-9])/g;

// A country code and check digits followed by at least eight more letters or digits.
const MAYBE_IBAN = /[A-Za-z]{2}\d{2} ?[A-Za-z0-9]{4} ?[A-Za-z0-9]{4}/;

/** Length and mod-97 checksum first (cheap), then the country's account format as ibantools knows it. */
export function isIban(compact: string): boolean {
  const iban = compact.toUpperCase();
  if (IBAN_LENGTHS.get(iban.slice(0, 2)) !== iban.length || !ibanChecksumValid(iban)) return false;
  return validateIBAN(iban).errorCodes.every((e) => TOLERATED.has(e));
}

function findIbans(text: string, out: PiiMatch[]): void {
  CANDIDATE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = CANDIDATE.exec(text)) !== null) {
    let candidate = m[0];
    // The last printed group may have swallowed the next word ("... 7034 and"); drop groups until it checks out.
    for (;;) {
      if (isIban(candidate.replace(/ /g, ''))) {
        out.push({ type: 'iban', start: m.index, end: m.index + candidate.length });
        break;
      }
      const cut = candidate.lastIndexOf(' ');
      if (cut < 15) break;
      candidate = candidate.slice(0, cut);
    }
  }
}

export const ibanDetector: PiiDetector = {
  type: 'iban',
  find(text, out) {
    if (MAYBE_IBAN.test(text)) findIbans(text, out);
  },
};
