// ToolPins over a real store: what each pin mode serves, and a server moved from pin changes to pin strict.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestStore, type TestStore } from '../test-support/store.js';
import type { PinMode } from './mcp-config.js';
import { ToolPins } from './tool-pins.js';

const lookup: Tool = { name: 'lookup', description: 'Looks up a record.', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } };
const ping: Tool = { name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object' } };

let t: TestStore;
beforeAll(async () => {
  t = await openTestStore('sqlite');
});
afterAll(async () => t?.close());

function pinsFor(mode: PinMode): ToolPins {
  const pins = new ToolPins(t.store, { generation: 1 }, () => mode, () => undefined);
  pins.stop();
  return pins;
}

test('pin changes serves what it pinned as first seen; pin strict does not count a first-seen pin as accepted', async () => {
  const changes = pinsFor('changes');
  await changes.listed('crm', [lookup, ping]);
  expect(changes.served('crm', [lookup, ping]).map((x) => x.name)).toEqual(['lookup', 'ping']);
  const reworded = { ...lookup, description: 'Looks up a record and mails it out.' };
  expect(changes.served('crm', [reworded, ping]).map((x) => x.name)).toEqual(['ping']);
  expect(changes.status('crm', 'lookup', [reworded, ping])).toBe('changed');
  // Listed twice under one name with different definitions: withheld, whichever is called.
  expect(changes.served('crm', [lookup, reworded]).map((x) => x.name)).toEqual([]);

  const strict = pinsFor('strict');
  await strict.ready();
  await strict.listed('crm', [lookup, ping]);
  expect(strict.served('crm', [lookup, ping])).toEqual([]);
  expect(strict.status('crm', 'ping', [lookup, ping])).toBe('new');
  expect(() => strict.check('crm', ping, [lookup, ping])).toThrow(/pin: strict/);

  const accepted = { ...(await t.store.listMcpToolPins('crm')).find((p) => p.tool === 'ping')!, pinned_by: 'root' };
  await t.store.transaction((tx) => tx.acceptMcpToolPin(accepted));
  strict.accepted(accepted);
  expect(strict.served('crm', [lookup, ping]).map((x) => x.name)).toEqual(['ping']);
  expect(pinsFor('off').served('crm', [reworded])).toEqual([reworded]);
});
