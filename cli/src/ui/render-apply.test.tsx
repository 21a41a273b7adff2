import { PassThrough } from 'node:stream';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { AdminApiError } from '../admin-client/errors.js';
import { FakeAdmin } from '../reconcile/__fixtures__/fake-admin.js';
import { applyChanges } from '../reconcile/apply/apply.js';
import { planChanges } from '../reconcile/engine.js';
import { ApplyView } from './ink/apply-view.js';
import { renderApply } from './render-apply.js';

const desired = {
  version: 1 as const,
  tenants: [{ id: 'acme', name: 'Acme' }],
  policies: [],
  agents: [
    { name: 'a1', tenant_id: 'acme' },
    { name: 'a2', tenant_id: 'acme' },
  ],
  routes: [],
};

async function partial() {
  const fake = new FakeAdmin();
  fake.failOn = { call: 'create agent acme/a1', error: new AdminApiError(404, 'policy_not_found', 'Policy x does not exist.') };
  const changeSet = await planChanges(fake, desired, { mode: 'sync' });
  return { fake, changeSet };
}

describe('apply progress', () => {
  it('plain: what was done, what failed, what was not done', async () => {
    const { fake, changeSet } = await partial();
    const out = new PassThrough();
    let text = '';
    out.on('data', (d) => (text += d));
    const result = await renderApply(applyChanges(fake, changeSet, { dry: false }), changeSet, 'plain', out as unknown as NodeJS.WriteStream);
    expect(result.failed?.change.id).toBe('acme/a1');
    expect(text).toBe(
      [
        '+ created tenant acme',
        '! failed to create agent acme/a1: Policy x does not exist (404 policy_not_found)',
        '  not done: create agent acme/a2',
        '',
        'Apply stopped: 1 done, 1 failed, 1 not done. Fix the cause and run apply again to finish the rest.',
        '',
      ].join('\n'),
    );
  });

  it('ink: one row per change with its status', async () => {
    const { fake, changeSet } = await partial();
    let result = null;
    const status = changeSet.changes.map(() => 'pending' as const);
    const { lastFrame, rerender, unmount } = render(<ApplyView changes={changeSet.changes} status={status} errors={{}} result={null} />);
    expect(lastFrame()).toBe('· create tenant acme\n· create agent acme/a1\n· create agent acme/a2');
    const gen = applyChanges(fake, changeSet, { dry: false });
    const statuses: ('pending' | 'running' | 'done' | 'failed' | 'skipped')[] = [...status];
    const errors: Record<number, unknown> = {};
    for await (const e of gen) {
      if (e.type === 'start') statuses[e.index] = 'running';
      if (e.type === 'done') statuses[e.index] = 'done';
      if (e.type === 'failed') {
        statuses[e.index] = 'failed';
        errors[e.index] = e.error;
      }
      if (e.type === 'skipped') statuses[e.index] = 'skipped';
      if (e.type === 'end') result = e.result;
    }
    rerender(<ApplyView changes={changeSet.changes} status={statuses} errors={errors} result={result} />);
    expect(lastFrame()).toMatchSnapshot();
    unmount();
  });
});
