// OpenAI SDKs ask for base64 embeddings by default: little-endian float32, as OpenAI sends them.

export function encodeEmbedding(values: number[], format: 'float' | 'base64' | undefined): number[] | string {
  if (format !== 'base64') return values;
  const floats = new Float32Array(values);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}
