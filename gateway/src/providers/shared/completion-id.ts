// Ids and timestamps for completions the gateway assembles from another format.

export function completionId(upstreamId: string | undefined, requestId: string): string {
  return upstreamId ? `chatcmpl-${upstreamId}` : `chatcmpl-${requestId}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
