// A deterministic unit vector per input text, so equal texts embed equally and different texts differ.
import { fnv1a, mulberry32 } from './mock-hash.js';

export function mockEmbedding(text: string, dimensions: number): number[] {
  const next = mulberry32(fnv1a(text));
  const values = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.sqrt(values.reduce((sum, v) => sum + v * v, 0)) || 1;
  return values.map((v) => v / norm);
}
