import type { TextProfile } from './pii-match.js';

export function profileText(text: string): TextProfile {
  let digits = 0;
  let hasAt = false;
  let hasColon = false;
  let hasDot = false;
  let hasDash = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c === 64) hasAt = true;
    else if (c === 58) hasColon = true;
    else if (c === 46) hasDot = true;
    else if (c === 45) hasDash = true;
    // Full-width digits are common in Japanese text and phone numbers.
    else if (c >= 0xff10 && c <= 0xff19) digits++;
  }
  return { digits, hasAt, hasColon, hasDot, hasDash };
}
