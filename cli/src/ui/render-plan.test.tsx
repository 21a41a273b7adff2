import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { FakeAdmin } from '../reconcile/__fixtures__/fake-admin.js';
import { planChanges } from '../reconcile/engine.js';
import { applyChanges } from '../reconcile/apply/apply.js';
import { loadDeclarativeFiles } from '../reconcile/file/read-files.js';
import { PlanView } from './ink/plan-view.js';
import { planText } from './render-plan.js';
import { planJson } from './json.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/policies.yaml', import.meta.url));

async function examplePlan() {
  const fake = new FakeAdmin();
  const desired = await loadDeclarativeFiles([EXAMPLE], {});
  return { fake, desired, changeSet: await planChanges(fake, desired, { mode: 'sync' }) };
}

describe('plan rendering of examples/policies.yaml', () => {
  it('plain text', async () => {
    const { changeSet } = await examplePlan();
    expect(planText(changeSet, 'plain')).toMatchSnapshot();
  });

  it('ink prints the same lines, in colour', async () => {
    const { changeSet } = await examplePlan();
    const { lastFrame, unmount } = render(<PlanView changeSet={changeSet} />);
    const frame = lastFrame() ?? '';
    unmount();
    expect(frame).toMatchSnapshot();
    const lines = (s: string) => stripVTControlCharacters(s).split('\n').map((l) => l.trimEnd());
    expect(lines(frame)).toEqual(lines(planText(changeSet, 'plain').trimEnd()));
  });

  it('an edit shows field-level old -> new and the summary line', async () => {
    const { fake, desired, changeSet } = await examplePlan();
    for await (const _ of applyChanges(fake, changeSet, { dry: false }));
    desired.policies[0].monthly_budget = 300;
    desired.policies[0].rules = { ...desired.policies[0].rules, pii: 'redact' };
    desired.agents.pop();
    const edited = await planChanges(fake, desired, { mode: 'sync', prune: true });
    expect(planText(edited, 'plain')).toBe(
      [
        '~ update policy support-standard',
        '    monthly_budget: 250 -> 300',
        '    rules.pii: "block" -> "redact"',
        '- delete agent globex/billing-assistant',
        '',
        'Plan: 0 to add, 1 to change, 1 to destroy.',
        '',
      ].join('\n'),
    );
  });

  it('JSON has a stable shape with no secret and no internal ids', async () => {
    const { changeSet } = await examplePlan();
    const doc = planJson(changeSet);
    expect(doc.summary).toEqual({ add: 8, change: 0, destroy: 0 });
    expect(Object.keys(doc.changes[0])).toEqual(['op', 'kind', 'id', 'before', 'after', 'changes']);
    expect(JSON.stringify(doc)).not.toMatch(/api_key|serverId|managed_by/);
  });

  it('says so when nothing changes', async () => {
    expect(planText({ changes: [], summary: { add: 0, change: 0, destroy: 0 } }, 'plain')).toBe(
      'No changes: the gateway matches the desired state.\nPlan: 0 to add, 0 to change, 0 to destroy.\n',
    );
  });
});
