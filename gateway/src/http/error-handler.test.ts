import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { AgentgwError } from '../contract/index.js';
import { expectSentence } from '../test-support/admin-api.js';
import { frameworkErrors, registerErrorHandling, toAgentgwError } from './error-handler.js';

describe('toAgentgwError', () => {
  test('an AgentgwError passes through unchanged', () => {
    const e = new AgentgwError('agent_not_found', 'Agent x does not exist: check the id.');
    expect(toAgentgwError(e)).toBe(e);
  });

  test('anything unexpected is a 500 internal_error that reveals nothing', () => {
    const e = toAgentgwError(new Error('connection to 10.0.0.5 failed: password authentication failed for user "gw"'));
    expect(e).toMatchObject({ status: 500, code: 'internal_error', param: null });
    expect(e.message).not.toContain('10.0.0.5');
    expect(e.message).not.toContain('password');
    expect(toAgentgwError(undefined)).toMatchObject({ status: 500, code: 'internal_error' });
  });

  test.each([
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 400, 'invalid_json'],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 400, 'invalid_json'],
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 413, 'body_too_large'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 400, 'invalid_header'],
    ['FST_ERR_BAD_URL', 400, 400, 'validation_failed'],
    ['FST_ERR_MAX_PARAM_LENGTH', 414, 400, 'validation_failed'],
    ['FST_ERR_SOMETHING_NEW', 404, 400, 'validation_failed'],
  ])('Fastify %s (%i) becomes %i %s with a sentence', (code, statusCode, status, expected) => {
    const err = Object.assign(new Error(`raw ${code}`), { code, statusCode });
    const e = toAgentgwError(err);
    expect(e).toMatchObject({ status, code: expected });
    expectSentence(e.message);
  });
});

describe('the error handler on a Fastify instance', () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = Fastify({ logger: false, frameworkErrors, routerOptions: { maxParamLength: 20 } });
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    registerErrorHandling(app);
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.get('/things/:id', { schema: { params: z.strictObject({ id: z.string() }), headers: z.looseObject({ 'x-n': z.string().regex(/^\d+$/).optional() }) } }, async (req) => ({
      id: req.params.id,
    }));
    r.post('/things', { schema: { body: z.strictObject({ name: z.string(), nested: z.strictObject({ n: z.number() }).optional() }) } }, async () => ({ ok: true }));
    r.get('/boom', async () => {
      throw new Error('secret detail');
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => app?.close());

  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${url}${path}`, init);
    return { status: res.status, body: (await res.json()) as { error: { message: string; type: string; code: string; param: string | null } } };
  };
  const post = (body: string) => get('/things', { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  test('router errors (bad percent-encoding, over-long path segment) get the CONTRACT body', async () => {
    for (const path of ['/things/%E0%A4%A', `/things/${'x'.repeat(40)}`]) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', param: null });
      expectSentence(r.body.error.message);
    }
  });

  test('a bad header is invalid_header naming the header', async () => {
    const r = await get('/things/a', { headers: { 'x-n': 'abc' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_header', param: 'x-n' });
    expectSentence(r.body.error.message);
  });

  test('validation names the field: missing, unknown (nested too), wrong type, absent body', async () => {
    expect((await post('{}')).body.error).toMatchObject({ code: 'validation_failed', param: 'name' });
    expect((await post('{"name":"a","extra":1}')).body.error).toMatchObject({ code: 'validation_failed', param: 'extra' });
    expect((await post('{"name":"a","nested":{"n":1,"m":2}}')).body.error).toMatchObject({ param: 'nested.m' });
    expect((await post('{"name":"a","nested":{"n":"1"}}')).body.error).toMatchObject({ param: 'nested.n' });
    const absent = await get('/things', { method: 'POST' });
    expect(absent.status).toBe(400);
    expect(absent.body.error).toMatchObject({ code: 'validation_failed', param: null });
    expectSentence(absent.body.error.message);
  });

  test('a thrown bug is a 500 without its detail; unknown routes are 404', async () => {
    const boom = await get('/boom');
    expect(boom.status).toBe(500);
    expect(boom.body.error.code).toBe('internal_error');
    expect(JSON.stringify(boom.body)).not.toContain('secret detail');
    const missing = await get('/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'not_found', code: 'route_not_found' });
  });
});
