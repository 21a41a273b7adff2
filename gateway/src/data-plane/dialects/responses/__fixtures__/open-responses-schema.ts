// Validation against the Open Responses OpenAPI document (open-responses-openapi.json, see README.md): the response
// object (ResponseResource) and every streaming event, by the schema its `type` names.
//
// The document defines the items, tools and events every implementation shares (messages, function calls, reasoning,
// function tools, ...); an implementation may add its own. OpenAI's other kinds (custom_tool_call, web_search_call,
// custom and built-in tools, response.custom_tool_call_input.* events) are such extensions: they are checked to have a
// `type` that the document does not define (and an `id` for items), and are counted in `extensions` so a test can say
// which ones it expects. Everything the document defines is validated as it stands, but for the `schema` of a
// response's json_schema text format (see withExtensions).
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

type Json = Record<string, any>;

const DOCUMENT: Json = JSON.parse(readFileSync(new URL('./open-responses-openapi.json', import.meta.url), 'utf8'));
const SCHEMAS: Json = DOCUMENT.components.schemas;
const ID = 'https://openresponses.org/openapi.json';

/** The fields every response object must have (ResponseResource.required). */
export const REQUIRED_RESPONSE_FIELDS: readonly string[] = SCHEMAS.ResponseResource.required;

/** Item types of ItemField, tool types of Tool: what the document itself defines. */
const ITEM_TYPES: string[] = SCHEMAS.ItemField.oneOf.map((r: Json) => SCHEMAS[refName(r)].properties.type.enum[0]);
const TOOL_TYPES: string[] = [SCHEMAS[refName(SCHEMAS.Tool)].properties.type.enum[0]];

/** Streaming event type -> its schema, from the `text/event-stream` answer of POST /responses. */
const EVENT_SCHEMAS: ReadonlyMap<string, string> = new Map(
  (DOCUMENT.paths['/responses'].post.responses['200'].content['text/event-stream'].schema.oneOf as Json[]).map((r) => {
    const name = refName(r);
    return [SCHEMAS[name].properties.type.enum[0] as string, name];
  }),
);

function refName(ref: Json): string {
  return (ref.$ref as string).slice('#/components/schemas/'.length);
}

/** The document with ItemField and Tool open to the kinds it does not define (see the header). */
function withExtensions(doc: Json): Json {
  const copy = structuredClone(doc);
  const s = copy.components.schemas;
  s.ItemField = {
    anyOf: [
      doc.components.schemas.ItemField,
      { type: 'object', required: ['type', 'id'], properties: { type: { type: 'string', not: { enum: ITEM_TYPES } }, id: { type: 'string' } } },
    ],
  };
  // The document's one known defect: the response's json_schema format says `schema: {type: "null"}`, which no echo
  // of a request's schema (an object, as the document's own JsonSchemaResponseFormatParam has it) can meet.
  s.JsonSchemaResponseFormat.properties.schema = { anyOf: [{ type: 'object' }, { type: 'null' }] };
  s.Tool = {
    anyOf: [doc.components.schemas.Tool, { type: 'object', required: ['type'], properties: { type: { type: 'string', not: { enum: TOOL_TYPES } } } }],
  };
  return { ...copy, $id: ID };
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
ajv.addSchema(withExtensions(DOCUMENT));
const validators = new Map<string, ValidateFunction>();

function validator(name: string): ValidateFunction {
  let v = validators.get(name);
  if (!v) {
    v = ajv.getSchema(`${ID}#/components/schemas/${name}`);
    if (!v) throw new Error(`The Open Responses document has no schema ${name}.`);
    validators.set(name, v);
  }
  return v;
}

function errorsOf(v: ValidateFunction, value: unknown, where: string): string[] {
  if (v(value)) return [];
  return (v.errors ?? []).map((e) => `${where}${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

export interface SchemaReport {
  errors: string[];
  /** Item, tool and event types outside the document, with how often each was seen. */
  extensions: Record<string, number>;
}

function note(report: SchemaReport, response: Json): void {
  for (const item of response?.output ?? []) if (!ITEM_TYPES.includes(item?.type)) report.extensions[item?.type] = (report.extensions[item?.type] ?? 0) + 1;
  for (const tool of response?.tools ?? []) if (!TOOL_TYPES.includes(tool?.type)) report.extensions[`tool:${tool?.type}`] = (report.extensions[`tool:${tool?.type}`] ?? 0) + 1;
}

/** A response object (the JSON body of POST /responses, GET /responses/{id}) against ResponseResource. */
export function checkResponseObject(response: unknown): SchemaReport {
  const report: SchemaReport = { errors: errorsOf(validator('ResponseResource'), response, 'response'), extensions: {} };
  note(report, response as Json);
  return report;
}

/** Stream events (parsed `data:` objects) against the schema of their type; snapshots' responses included. */
export function checkStreamEvents(events: readonly Json[]): SchemaReport {
  const report: SchemaReport = { errors: [], extensions: {} };
  events.forEach((event, i) => {
    const name = EVENT_SCHEMAS.get(event?.type);
    if (!name) {
      report.extensions[event?.type] = (report.extensions[event?.type] ?? 0) + 1;
      if (typeof event?.type !== 'string' || !Number.isInteger(event?.sequence_number)) report.errors.push(`event ${i} has no type or sequence_number`);
      return;
    }
    report.errors.push(...errorsOf(validator(name), event, `event ${i} (${event.type})`));
    if (event.response) note(report, event.response);
    if (event.item && !ITEM_TYPES.includes(event.item.type)) report.extensions[event.item.type] = (report.extensions[event.item.type] ?? 0) + 1;
  });
  return report;
}

/** SSE text -> the `data:` objects of its events (comments and keep-alives skipped). */
export function sseEventData(sse: string): Json[] {
  const out: Json[] = [];
  for (const block of sse.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data && data !== '[DONE]') out.push(JSON.parse(data));
  }
  return out;
}

/** Fails the test with every schema error of a response object; returns the extension types seen. */
export function expectOpenResponsesObject(response: unknown): Record<string, number> {
  const report = checkResponseObject(response);
  expect(report.errors).toEqual([]);
  return report.extensions;
}

/** Fails the test with every schema error of a stream (SSE text or parsed events); returns the extension types seen. */
export function expectOpenResponsesStream(stream: string | readonly Json[]): Record<string, number> {
  const report = checkStreamEvents(typeof stream === 'string' ? sseEventData(stream) : stream);
  expect(report.errors).toEqual([]);
  return report.extensions;
}

/**
 * A fetch for the openai SDK (and the Agents SDK) that validates what agentgw answers on POST /responses and GET
 * /responses/{id} (the JSON body, or every event of the stream, read from a copy while the SDK reads the other) and
 * collects the errors; `settled()` waits for the streams still being read and takes every error so far.
 */
export function schemaCheckingFetch(): { fetch: typeof fetch; settled: () => Promise<string[]>; checked: () => number } {
  const errors: string[] = [];
  const pending: Promise<void>[] = [];
  let checked = 0;
  const checking: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const isCreate = method === 'POST' && /\/responses$/.test(url.pathname);
    const isRead = method === 'GET' && /\/responses\/[^/]+$/.test(url.pathname);
    if (!(isCreate || isRead) || res.status !== 200 || !res.body) return res;
    const [forClient, forCheck] = res.body.tee();
    const streamed = (res.headers.get('content-type') ?? '').includes('text/event-stream');
    pending.push(
      new Response(forCheck).text().then(
        (text) => {
          checked++;
          const report = streamed ? checkStreamEvents(sseEventData(text)) : checkResponseObject(JSON.parse(text));
          errors.push(...report.errors.map((e) => `${method} ${url.pathname}: ${e}`));
        },
        () => undefined, // The client went away mid-stream: what it did not read is not checked.
      ),
    );
    return new Response(forClient, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return {
    fetch: checking,
    settled: async () => {
      await Promise.all(pending.splice(0));
      return errors.splice(0);
    },
    checked: () => checked,
  };
}
