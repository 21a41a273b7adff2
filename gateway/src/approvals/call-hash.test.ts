// "The same call" for an approval given after its timeout, and the arguments a person is shown before approving.
import { describe, expect, it } from 'vitest';
import { proposedToolCall } from '../policy/tool-rules.js';
import { argumentsAsWritten, callHash } from './call-hash.js';

const call = (text: string, name = 'Bash') => proposedToolCall(name, text);

describe('callHash', () => {
  it('is the same for the same tool and arguments, keys in any order and runs of whitespace read as one space', () => {
    const h = callHash(call('{"command":"rm -rf build","cwd":"/w"}'));
    expect(callHash(call('{ "cwd": "/w", "command": "rm  -rf\\tbuild" }'))).toBe(h);
    expect(callHash(call('{"command":"rm -rf build","cwd":"/w","x":1}'))).not.toBe(h);
    expect(callHash(call('{"command":"rm -rf build","cwd":"/w"}', 'Shell'))).not.toBe(h);
    expect(callHash(call('{"command":"rm -rf dist","cwd":"/w"}'))).not.toBe(h);
  });

  it('reads arguments that repeat a key as written, so an approval of one reading never passes another', () => {
    const twice = '{"command":"rm -rf /","command":"ls"}';
    expect(argumentsAsWritten(call(twice))).toBe(twice);
    expect(callHash(call(twice))).not.toBe(callHash(call('{"command":"ls"}')));
    expect(argumentsAsWritten(call('{"command":"ls"}'))).toEqual({ command: 'ls' });
    expect(argumentsAsWritten(call('not json'))).toBe('not json');
  });
});
