// The fail-closed walk: every string, every number that could hold PII and every key that is not a member the dialects
// define, at any depth, without recursion. What a policy view has no rule for is read with this, so a part type a
// provider adds tomorrow is read the day it appears.
import { DIALECT_MEMBERS } from '../../contract/dialect-members.js';
import type { TextVisitor } from './request-texts.js';

type Json = Record<string, unknown>;

/** A string value that is an identifier of the dialect (a role, a type): lowercase words, no room for PII. */
const ENUM_VALUE = /^[a-z_.]{0,64}$/;

/** Numbers shorter than this many characters hold no phone, card, account or id number. */
const NUMBER_TEXT_MIN = 7;

/**
 * Members known to carry no text a client wrote, each with its reason. The walk skips them; everything else is read.
 * - thinking / redacted_thinking `thinking`, `signature`, `data`: signed by the model that wrote them (the upstream
 *   refuses an edited or forged block) and left out of translated calls.
 * - reasoning `encrypted_content`: encrypted by the provider; left out of translated calls.
 * - a `base64` source's `data` (images and PDFs), an MCP image or audio block's `data`, a resource's `blob`, and
 *   `data:image/...` or PDF data URLs: binary, read by no text rule.
 * - an image generation call's `result`: a base64 image.
 */
export function carriesNoText(holder: Json, key: string, value: unknown): boolean {
  switch (key) {
    case 'thinking':
    case 'signature':
      return holder.type === 'thinking' || holder.type === 'redacted_thinking';
    case 'data':
      return holder.type === 'redacted_thinking' || holder.type === 'base64' || holder.type === 'image' || holder.type === 'audio' || isBinaryDataUrl(value);
    case 'encrypted_content':
      return holder.type === 'reasoning' || holder.type === 'compaction';
    case 'result':
      return holder.type === 'image_generation_call';
    case 'blob':
      return true;
    case 'type':
    case 'role':
      return typeof value === 'string' && ENUM_VALUE.test(value);
    case 'url':
    case 'image_url':
    case 'file_data':
      return isBinaryDataUrl(value);
    default:
      return false;
  }
}

function isBinaryDataUrl(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith('data:') && (value.startsWith('data:image/') || value.startsWith('data:application/pdf'));
}

/** Writes `holder[key] = value` as an own data property, `__proto__` included. */
function put(holder: Json | unknown[], key: string | number, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
  else (holder as Record<string | number, unknown>)[key] = value;
}

/**
 * Visits every string of `holder[key]` (the value itself if it is one), every number long enough to hold PII (as its
 * text; a replacement becomes a string) and every key that is not in DIALECT_MEMBERS (a replaced key is renamed), at any
 * depth, iteratively, reporting each as `field`. Members `carriesNoText` names are skipped.
 */
export function visitAll(holder: Json | unknown[], key: string | number, visit: TextVisitor, field: string): void {
  const holders: Array<Json | unknown[]> = [holder];
  const keys: Array<string | number> = [key];
  while (holders.length > 0) {
    const h = holders.pop()!;
    const k = keys.pop()!;
    const v = (h as Record<string | number, unknown>)[k];
    if (typeof v === 'string') {
      if (v.length === 0) continue;
      // Tool call arguments are JSON text that the upstream parses: the PII module reads them as such (json-text.ts).
      const r = visit(v, k === 'arguments' ? 'arguments' : field);
      if (r !== undefined && r !== v) put(h, k, r);
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v) || (v < 1e6 && v > -1e6)) continue;
      const text = String(v);
      if (text.length < NUMBER_TEXT_MIN) continue;
      const r = visit(text, field);
      if (r !== undefined && r !== text) put(h, k, r);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        holders.push(v);
        keys.push(i);
      }
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Json;
      const names = Object.keys(o);
      for (let i = names.length - 1; i >= 0; i--) {
        const name = names[i]!;
        if (carriesNoText(o, name, o[name])) continue;
        holders.push(o);
        keys.push(name);
      }
      for (const name of names) {
        if (DIALECT_MEMBERS.has(name)) continue;
        const renamed = visit(name, field);
        if (renamed === undefined || renamed === name) continue;
        // Keys are renamed after their values are queued under the old name: the value moves with a holder wrapper.
        renameKey(o, name, renamed, holders, keys);
      }
    }
  }
}

/** Renames `o[from]` to `to` (a fresh name if taken), fixing the queued visits of its value. */
function renameKey(o: Json, from: string, to: string, holders: Array<Json | unknown[]>, keys: Array<string | number>): void {
  let name = to;
  for (let i = 2; Object.prototype.hasOwnProperty.call(o, name); i++) name = `${to}#${i}`;
  const value = o[from];
  delete o[from];
  put(o, name, value);
  for (let i = holders.length - 1; i >= 0; i--) {
    if (holders[i] === o && keys[i] === from) keys[i] = name;
  }
}
