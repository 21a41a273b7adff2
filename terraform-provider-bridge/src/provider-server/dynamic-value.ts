import { decode, encode, ExtensionCodec } from '@msgpack/msgpack';

/** A value terraform does not know yet (planned "known after apply"). */
export class Unknown {
  public readonly unknown = true;
}
export const UNKNOWN = new Unknown();

export type TfValue = null | string | number | boolean | Unknown | TfValue[] | { [key: string]: TfValue };
export type TfObject = { [key: string]: TfValue };

export interface DynamicValue {
  msgpack?: Buffer | Uint8Array | null;
  json?: Buffer | Uint8Array | null;
}

// cty's msgpack encoding marks unknown values with extension type 0 (and 12 for unknowns with refinements).
const codec = new ExtensionCodec();
codec.register({
  type: 0,
  encode: (value: unknown) => (value instanceof Unknown ? new Uint8Array([0]) : null),
  decode: () => UNKNOWN,
});
codec.register({ type: 12, encode: () => null, decode: () => UNKNOWN });

export function isUnknown(value: unknown): value is Unknown {
  return value instanceof Unknown;
}

/** True when the value or anything inside it is unknown. */
export function containsUnknown(value: unknown): boolean {
  if (isUnknown(value)) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value && typeof value === 'object') return Object.values(value).some(containsUnknown);
  return false;
}

/** Decodes a DynamicValue; an absent one is null. */
export function decodeDynamicValue(dv: DynamicValue | null | undefined): TfValue {
  if (dv?.msgpack && dv.msgpack.length > 0) return decode(dv.msgpack, { extensionCodec: codec }) as TfValue;
  if (dv?.json && dv.json.length > 0) return JSON.parse(Buffer.from(dv.json).toString('utf8')) as TfValue;
  return null;
}

export function encodeDynamicValue(value: TfValue): { msgpack: Buffer } {
  const bytes = encode(value, { extensionCodec: codec });
  return { msgpack: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}
