import { describe, expect, it } from 'vitest';
import { encodeThinkingBlocks } from '../../translate/carried-thinking.js';
import { NO_TEXT_MEMBERS, visitAll } from './walk-all.js';

const visited = (value: unknown): string[] => {
  const out: string[] = [];
  visitAll({ content: value }, 'content', (text) => (out.push(text), undefined), 'f');
  return out;
};

describe('visitAll', () => {
  it('skips only the members listed as holding no text: adding one is a decision made here', () => {
    expect(Object.fromEntries(NO_TEXT_MEMBERS)).toEqual({
      thinking: ['thinking', 'signature'],
      redacted_thinking: ['data'],
      reasoning: ['encrypted_content'],
      compaction: ['encrypted_content'],
      base64: ['data'],
      image: ['data'],
      audio: ['data'],
      image_generation_call: ['result'],
    });
  });

  it('reads every string, long number and client-named key at any depth, and none of the skipped members', () => {
    let deep: unknown = { 'jane@example.com': 4155552671, n: 12, text: 'hello' };
    for (let i = 0; i < 10_000; i++) deep = i % 2 ? [deep] : { content: deep };
    expect(visited(deep).sort()).toEqual(['4155552671', 'hello', 'jane@example.com']);
    expect(visited({ type: 'thinking', thinking: 'secret thoughts', signature: 'EqQBCkYIBxgC', extra: 'read me' }).sort()).toEqual(['extra', 'read me']);
    expect(visited({ type: 'constructor', text: 'read me' }).sort()).toEqual(['read me']);
    expect(visited({ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } })).toEqual([]);
    expect(visited({ type: 'image_url', image_url: { url: 'https://x.io/?u=a' } })).toEqual(['https://x.io/?u=a']);
    expect(visited({ type: 'Not An Enum', role: 'user' })).toEqual(['Not An Enum']);
  });

  it('skips binary members only where a dialect shapes the object, and only when they are base64', () => {
    const b64 = Buffer.from('\x89PNG 4155552671 4155552671').toString('base64');
    // Where the dialect puts them: skipped.
    expect(visited({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64 } }).sort()).toEqual(['base64', 'image/png']);
    expect(visited({ type: 'resource', resource: { uri: 'file:///a', blob: b64 } })).toEqual(['file:///a']);
    expect(visited({ type: 'redacted_thinking', data: b64 })).toEqual([]);
    // Not base64 (an address has an @): read.
    expect(visited({ type: 'image', data: 'contact alice.smith@corp-mail.net' })).toEqual(['contact alice.smith@corp-mail.net']);
    expect(visited({ type: 'resource', resource: { blob: 'alice.smith@corp-mail.net' } })).toEqual(['alice.smith@corp-mail.net']);
    expect(visited({ type: 'reasoning', encrypted_content: 'gAAAA alice.smith@corp-mail.net' })).toEqual(['gAAAA alice.smith@corp-mail.net']);
    // Claude's signed thinking, carried by agentgw in a reasoning item (its mark, then base64), is skipped as signed thinking is.
    const carried = encodeThinkingBlocks([{ type: 'thinking', thinking: 'the user is alice.smith@corp-mail.net', signature: 'EqQBCkYIBxgC' }]);
    expect(visited({ type: 'reasoning', summary: [], encrypted_content: carried })).toEqual([]);
    // And on a chat assistant message, as thinking_blocks.
    expect(visited({ role: 'assistant', content: 'x', thinking_blocks: [{ type: 'thinking', thinking: 'alice.smith@corp-mail.net', signature: 'EqQBCkYIBxgC' }] })).toEqual(['x']);
    expect(visited({ type: 'reasoning', encrypted_content: `${carried.slice(0, carried.indexOf(':') + 1)}alice.smith@corp-mail.net` })).toHaveLength(1);
    // A thinking block's text is skipped only under a signature.
    for (const signature of [undefined, '', 'not base64!']) {
      expect(visited({ type: 'thinking', thinking: 'mail alice.smith@corp-mail.net', ...(signature === undefined ? {} : { signature }) })).toContain('mail alice.smith@corp-mail.net');
    }
    // Below a member the client shapes (a tool's input, arguments, metadata, a member no dialect defines), every shape
    // is read: nothing there is a dialect's block.
    const lookalikes = [
      { type: 'image', data: 'contact 4155552671' },
      { blob: '4155552671' },
      { type: 'thinking', thinking: 'contact 4155552671', signature: 'EqQBCkYIBxgC' },
      { url: 'data:image/png;base64,NDE1NTU1MjY3MQ==', text: 'x' },
    ];
    for (const inner of lookalikes) {
      expect(visited({ type: 'tool_use', id: 't', name: 'f', input: { a: [inner] } }).join(' ')).toMatch(/4155552671|NDE1NTU1MjY3MQ/);
      expect(visited({ type: 'text', text: 'x', metadata: inner }).join(' ')).toMatch(/4155552671|NDE1NTU1MjY3MQ/);
      expect(visited({ type: 'text', text: 'x', anything: { deeper: inner } }).join(' ')).toMatch(/4155552671|NDE1NTU1MjY3MQ/);
    }
  });

  it('reads a text file sent inline decoded (data URLs of a text type, base64 sources and blobs declaring one), and writes a replacement back encoded', () => {
    const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');
    expect(visited({ type: 'file', file: { file_data: `data:text/plain;base64,${b64('call 4155552671')}` } })).toEqual(['call 4155552671']);
    expect(visited({ type: 'input_file', file_data: 'data:,call%204155552671%20%E2%82%AC' })).toEqual(['call 4155552671 \u20ac']);
    expect(visited({ type: 'input_file', file_data: `data:application/json;charset=utf-8;base64,${b64('{"a":1}')}` })).toEqual(['{"a":1}']);
    expect(visited({ type: 'document', source: { type: 'base64', media_type: 'text/csv', data: b64('a,b') } }).sort()).toEqual(['a,b', 'base64', 'text/csv']);
    expect(visited({ type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', blob: b64('hello') } }).sort()).toEqual(['file:///a.txt', 'hello', 'text/plain']);
    // Media stays skipped, whatever member holds it.
    expect(visited({ type: 'input_file', file_data: `data:application/pdf;base64,${b64('%PDF 4155552671')}` })).toEqual([]);
    expect(visited({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64('%PDF') } }).sort()).toEqual(['application/pdf', 'base64']);
    // Bytes that are not UTF-8 (a Latin-1 text, a zip) read one character per byte: the ASCII in them is read, and a
    // rewrite gives every other byte back as it was.
    const latin1 = Buffer.from('Café: write to jane@example.com', 'latin1');
    const zip = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0xfe, 0x80, 0x81]);
    expect(visited({ type: 'input_file', file_data: `data:text/plain;base64,${latin1.toString('base64')}` })).toEqual(['Café: write to jane@example.com']);
    expect(visited({ type: 'input_file', file_data: `data:application/zip;base64,${zip.toString('base64')}` })).toEqual([zip.toString('latin1')]);
    expect(visited({ type: 'input_file', file_data: 'data:text/plain,%FF%FE' })).toEqual(['\u00ff\u00fe']);
    const rewritten = { content: [{ type: 'input_file', file_data: `data:text/plain;base64,${latin1.toString('base64')}` }] } as Record<string, any>;
    visitAll(rewritten, 'content', (text) => text.replace('jane@example.com', '[EMAIL]'), 'f');
    expect(rewritten.content[0].file_data).toBe(`data:text/plain;base64,${Buffer.from('Café: write to [EMAIL]', 'latin1').toString('base64')}`);
    // Written back in the form it came in.
    const holder = { content: [{ type: 'file', file: { file_data: `data:text/plain;base64,${b64('mail jane@example.com')}` } }, { type: 'input_file', file_data: 'data:text/plain,mail%20jane%40example.com' }] } as Record<string, any>;
    visitAll(holder, 'content', (text) => text.replace('jane@example.com', '[EMAIL]'), 'f');
    expect(holder.content[0].file.file_data).toBe(`data:text/plain;base64,${b64('mail [EMAIL]')}`);
    expect(holder.content[1].file_data).toBe(`data:text/plain,${encodeURIComponent('mail [EMAIL]')}`);
    // Below a member the client shapes, a data URL is text the model reads as sent.
    expect(visited({ type: 'tool_use', id: 't', name: 'f', input: { file_data: `data:text/plain;base64,${b64('x')}` } })).toContain(`data:text/plain;base64,${b64('x')}`);
  });

  it('renames a key that a visitor replaces, __proto__ included, keeping it an own property', () => {
    const holder = JSON.parse('{"v":{"__proto__":{"x@example.com":"y"}}}') as Record<string, any>;
    visitAll(holder, 'v', (text) => text.replace('x@example.com', 'R').replace('__proto__', 'P'), 'f');
    expect(JSON.stringify(holder)).toBe('{"v":{"P":{"R":"y"}}}');
    expect(Object.getPrototypeOf(holder.v)).toBe(Object.prototype);
  });
});
