// cdktf's markers for tokens it never resolved; they mean a token was turned into text outside synthesis.
const TOKEN_MARKER = /[$#&]\{TfToken\[[^\]]*\]\}/;

/** The first unresolved cdktf string, list or map token in a string, if any. */
export function findStringToken(s: string): string | undefined {
  return TOKEN_MARKER.exec(s)?.[0];
}

/** True for the NaN-space doubles cdktf uses to smuggle number and list tokens through `number` fields. */
export function isNumberToken(n: number): boolean {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n);
  const top = view.getUint16(0);
  return top === 0xfdff || top === 0xfbff;
}
