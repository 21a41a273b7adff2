import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AgentgwError, isAgentgwError } from '../contract/errors.js';
import { isStoreUnavailableError, storeUnavailable } from '../storage/store-errors.js';

type Issue = { instancePath: string; message?: string; keyword: string; params?: Record<string, unknown> };

/** Where a bug is logged (a pino logger, or anything with its error method). */
export interface ErrorLog {
  error(obj: object, msg: string): void;
}

/** One place that turns anything thrown into CONTRACT's error body. */
export function toAgentgwError(err: unknown, log?: ErrorLog): AgentgwError {
  if (isAgentgwError(err)) return err;
  const e = err as FastifyError & { validationContext?: string; validation?: Issue[] };
  if (hasZodFastifySchemaValidationErrors(e)) return validationError(e.validationContext ?? 'body', e.validation as Issue[]);
  switch (e?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AgentgwError('invalid_json', 'The request body is not valid JSON: send one JSON object with Content-Type: application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AgentgwError('body_too_large', 'The request body is too large: send a smaller body.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AgentgwError('invalid_header', 'Unsupported Content-Type: send the body as JSON with Content-Type: application/json.', {
        param: 'content-type',
      });
    case 'FST_ERR_BAD_URL':
      return new AgentgwError('validation_failed', 'The URL path is not valid percent-encoding: encode path segments with encodeURIComponent.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AgentgwError('validation_failed', 'A path segment of the URL is too long: check the id in the path.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AgentgwError('invalid_header', 'The Content-Length header does not match the body: fix the header.', { param: 'content-length' });
  }
  if (e instanceof SyntaxError && (e as FastifyError).statusCode === 400) {
    return new AgentgwError('invalid_json', 'The request body is not valid JSON: send one JSON object with Content-Type: application/json.');
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    if (e.statusCode === 413) return new AgentgwError('body_too_large', 'The request body is too large: send a smaller body.');
    const detail = String(e.message ?? '').trim() || 'it was refused';
    return new AgentgwError('validation_failed', `The request is not valid: ${detail}${/[.!?]$/.test(detail) ? '' : '.'}`);
  }
  // The database is restarting, stopped or unreachable: 503 with Retry-After, never a 500 (CONTRACT's errors table).
  if (isStoreUnavailableError(err)) return storeUnavailable(err);
  log?.error({ err }, 'unhandled error');
  return new AgentgwError('internal_error', 'Internal error in agentgw; the request was not completed. Try again; if it persists, report it.');
}

function validationError(context: string, issues: Issue[]): AgentgwError {
  const issue = issues[0]!;
  const segments = issue.instancePath.split('/').filter(Boolean);
  const where = context === 'querystring' ? 'query' : context === 'params' ? 'path' : context === 'headers' ? 'header' : context;
  // A bad header is invalid_header (CONTRACT), whatever the schema said about it.
  const code = context === 'headers' ? 'invalid_header' : 'validation_failed';
  if (issue.keyword === 'unrecognized_keys') {
    const keys = (issue.params?.keys as string[] | undefined) ?? [];
    const field = [...segments, keys[0] ?? ''].filter(Boolean).join('.');
    return new AgentgwError(code, `Unknown field ${JSON.stringify(field)} in the ${where}: remove it or check its spelling.`, { param: field });
  }
  const field = segments.join('.');
  if (issue.keyword === 'invalid_type' && /received undefined/.test(issue.message ?? '')) {
    if (!field) return new AgentgwError(code, `The request ${where} is missing: send one JSON object with Content-Type: application/json.`);
    return new AgentgwError(code, `Missing required field ${JSON.stringify(field)} in the ${where}.`, { param: field });
  }
  const what = field ? `${where} field ${JSON.stringify(field)}` : `request ${where}`;
  return new AgentgwError(code, `Invalid ${what}: ${issue.message ?? 'invalid value'}.`, { param: field || null });
}

export function sendError(reply: FastifyReply, err: AgentgwError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.code(err.status).type('application/json').send(err.toBody());
}

/**
 * Fastify's `frameworkErrors` option: errors the router raises before any route or error handler runs
 * (a malformed percent-encoding, a path segment over maxParamLength) get CONTRACT's body too.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  sendError(reply, toAgentgwError(err, req.log));
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply) => sendError(reply, toAgentgwError(err, req.log)));
  app.setNotFoundHandler((req, reply) =>
    sendError(
      reply,
      new AgentgwError('route_not_found', `No route ${req.method} ${req.url.split('?')[0]}: check the path (admin under /api, gateway under /v1).`),
    ),
  );
}
