import { describe, expect, it } from 'vitest';
import { CliError } from '../../errors.js';
import { readCdktf } from './cdktf.js';

const FAKE = new URL('./__fixtures__/fake-cdktf.ts', import.meta.url).href;

describe('readCdktf', () => {
  it('reads and validates the desired state the module synthesises', async () => {
    const src = await readCdktf('app', FAKE);
    expect(src.file).toBe('cdktf app');
    expect(src.content.agents).toEqual([{ name: 'bot', tenant_id: 'acme' }]);
  });

  it('a missing module is one clear sentence', async () => {
    const err = await readCdktf('app', '@agentgw/cdktf-not-there').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as Error).message).toBe('--cdktf needs the @agentgw/cdktf-not-there package, which is not installed or not built (run npm run build)');
  });

  it('an invalid synthesised state names the field', async () => {
    await expect(readCdktf('bad', FAKE)).rejects.toThrow(/^the CDKTF app in bad gives an invalid desired state: tenants\[0\]\.id: must be lowercase/);
  });

  it('a synth failure is one sentence', async () => {
    await expect(readCdktf('throws', FAKE)).rejects.toThrow('cannot read the CDKTF app in throws: cdk.tf.json not found in throws');
  });
});
