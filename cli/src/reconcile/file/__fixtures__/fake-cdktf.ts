/** Stands in for @agentgw/cdktf: a desired state per "directory" name. */
export function desiredStateFromCdktf(dir: string): unknown {
  if (dir === 'bad') return { version: 1, tenants: [{ id: 'Not An Id', name: 'x' }] };
  if (dir === 'throws') throw new Error('cdk.tf.json not found in throws');
  return { version: 1, tenants: [{ id: 'acme', name: 'Acme' }], agents: [{ name: 'bot', tenant_id: 'acme' }] };
}
