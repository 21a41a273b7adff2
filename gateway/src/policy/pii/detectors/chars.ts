/** Character tests on UTF-16 code units, shared by the scanners that avoid regular expressions. */

export function isAsciiDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

export function isAsciiAlnum(c: number): boolean {
  return isAsciiDigit(c) || isAsciiLetter(c);
}

/** ASCII letters plus Latin-1 and Latin Extended letters: a number glued to one of these is a code, not PII. */
export function isLatinLetter(c: number): boolean {
  return isAsciiLetter(c) || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7);
}

export function isWordChar(c: number): boolean {
  return isAsciiAlnum(c) || c === 95;
}

export function isWhitespace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f;
}
