// The objects of a Gemini request as Google's parser reads them: each member under its lowerCamelCase name or its
// proto (snake_case) name. One table drives the shape check (types of the structural members, case variants refused,
// one spelling per member) and the camelCase copy that translation and the tool filter read.
import { AgentgwError } from '../../../contract/index.js';
import { isKeptPart } from '../../../json/part-values.js';

type Json = Record<string, unknown>;

/** What a member holds: a leaf, an object of a kind, an array of them, or an object the client names (not walked). */
type Member =
  | { t: 'string' | 'number' | 'boolean' | 'any' }
  | { t: 'object'; kind: Kind }
  | { t: 'array'; kind: Kind | 'string' | 'any' }
  | { t: 'named' };

type Kind =
  | 'request' | 'content' | 'part' | 'blob' | 'fileData' | 'functionCall' | 'functionResponse' | 'code' | 'codeResult'
  | 'tool' | 'declaration' | 'toolConfig' | 'callingConfig' | 'generationConfig' | 'thinkingConfig' | 'safety';

const S = { t: 'string' } as const;
const N = { t: 'number' } as const;
const B = { t: 'boolean' } as const;
const ANY = { t: 'any' } as const;
const NAMED = { t: 'named' } as const;
const obj = (kind: Kind): Member => ({ t: 'object', kind });
const arr = (kind: Kind | 'string' | 'any'): Member => ({ t: 'array', kind });

/** The members of each object kind, by their lowerCamelCase names. Unknown members pass (clients add fields). */
const SHAPES: Record<Kind, Record<string, Member>> = {
  request: {
    model: S, contents: arr('content'), systemInstruction: obj('content'), tools: arr('tool'), toolConfig: obj('toolConfig'),
    safetySettings: arr('safety'), generationConfig: obj('generationConfig'), cachedContent: S, labels: NAMED, serviceTier: ANY, store: ANY,
    // countTokens' wrapped request.
    generateContentRequest: obj('request'),
  },
  content: { role: S, parts: arr('part') },
  part: {
    text: S, inlineData: obj('blob'), fileData: obj('fileData'), functionCall: obj('functionCall'), functionResponse: obj('functionResponse'),
    executableCode: obj('code'), codeExecutionResult: obj('codeResult'), thought: B, thoughtSignature: S, videoMetadata: ANY,
    partMetadata: NAMED, mediaResolution: ANY,
  },
  blob: { mimeType: S, data: S, displayName: S },
  fileData: { mimeType: S, fileUri: S, displayName: S },
  functionCall: { id: S, name: S, args: NAMED, partialArgs: ANY, willContinue: B },
  functionResponse: { id: S, name: S, response: NAMED, parts: ANY, willContinue: B, scheduling: ANY },
  code: { language: S, code: S, id: S },
  codeResult: { outcome: S, output: S, id: S },
  tool: {
    functionDeclarations: arr('declaration'), googleSearch: ANY, googleSearchRetrieval: ANY, codeExecution: ANY, urlContext: ANY,
    computerUse: ANY, fileSearch: ANY, googleMaps: ANY, mcpServers: ANY, retrieval: ANY, enterpriseWebSearch: ANY,
  },
  declaration: { name: S, description: S, parameters: NAMED, parametersJsonSchema: NAMED, response: NAMED, responseJsonSchema: NAMED, behavior: ANY },
  toolConfig: { functionCallingConfig: obj('callingConfig'), retrievalConfig: ANY },
  callingConfig: { mode: S, allowedFunctionNames: arr('string'), streamFunctionCallArguments: B },
  generationConfig: {
    stopSequences: arr('string'), responseMimeType: S, responseSchema: NAMED, responseJsonSchema: NAMED, _responseJsonSchema: NAMED,
    responseModalities: arr('any'), candidateCount: N, maxOutputTokens: N, temperature: N, topP: N, topK: N, seed: N,
    presencePenalty: N, frequencyPenalty: N, responseLogprobs: B, logprobs: N, enableEnhancedCivicAnswers: B, speechConfig: ANY,
    thinkingConfig: obj('thinkingConfig'), imageConfig: ANY, mediaResolution: ANY,
  },
  thinkingConfig: { includeThoughts: B, thinkingBudget: N, thinkingLevel: S },
  safety: { category: S, threshold: S, method: S },
};

/** `systemInstruction` -> `system_instruction`. */
export function snakeOf(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Per kind: each accepted spelling -> the camelCase member; each folded form (lowercase, no `_`) -> the camelCase member. */
const SPELLINGS = new Map<Kind, { exact: Map<string, string>; folded: Map<string, string> }>();
for (const [kind, members] of Object.entries(SHAPES) as Array<[Kind, Record<string, Member>]>) {
  const exact = new Map<string, string>();
  const folded = new Map<string, string>();
  for (const m of Object.keys(members)) {
    exact.set(m, m);
    exact.set(snakeOf(m), m);
    folded.set(fold(m), m);
  }
  SPELLINGS.set(kind, { exact, folded });
}

function fold(key: string): string {
  return key.toUpperCase().toLowerCase().replaceAll('_', '');
}

/** Every member name of the Gemini wire format, both spellings: fixed words, not a client's text. */
export const GEMINI_MEMBERS: ReadonlySet<string> = new Set([...SPELLINGS.values()].flatMap((s) => [...s.exact.keys()]));

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function invalid(param: string, message: string): AgentgwError {
  return new AgentgwError('validation_failed', message, { param });
}

/** How deep the check follows arrays of defined objects (contents -> parts; tools -> declarations). */
const expected: Record<Member['t'], string> = { string: 'a string', number: 'a number', boolean: 'true or false', any: '', object: 'an object', array: 'an array', named: 'an object' };

/**
 * Throws 400 `validation_failed` naming the field: a member of a defined object with the wrong JSON type, a key that
 * differs from a member only by case or underscores (`Contents`, `system_Instruction`), or a member sent under both its
 * spellings (`systemInstruction` and `system_instruction`: which one the upstream reads is not ours to guess).
 */
export function checkGeminiShape(body: unknown): asserts body is Json {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AgentgwError('invalid_json', 'The request body must be a JSON object (a GenerateContentRequest): send one with Content-Type: application/json.');
  }
  const stack: Array<[Json, Kind, string]> = [[body as Json, 'request', '']];
  // Parts an agent sent before (kept, frozen: contents, tools) are checked the first time only.
  const kept: Array<[object, Kind]> = [];
  while (stack.length > 0) {
    const [o, kind, path] = stack.pop()!;
    const { exact, folded } = SPELLINGS.get(kind)!;
    const seen = new Map<string, string>();
    for (const key of Object.keys(o)) {
      const param = path === '' ? key : `${path}.${key}`;
      let member = exact.get(key);
      if (member === undefined) {
        const near = folded.get(fold(key));
        if (near !== undefined) {
          throw invalid(param, `Field ${JSON.stringify(param)} differs from ${JSON.stringify(near)} only by case or underscores: send ${JSON.stringify(near)} (or ${JSON.stringify(snakeOf(near))}).`);
        }
        continue;
      }
      const other = seen.get(member);
      if (other !== undefined) {
        throw invalid(param, `Field ${JSON.stringify(param)} is sent twice, as ${JSON.stringify(other)} and ${JSON.stringify(key)}: send one spelling.`);
      }
      seen.set(member, key);
      const spec = SHAPES[kind][member]!;
      const v = o[key];
      if (v === null && kind !== 'request') continue;
      switch (spec.t) {
        case 'any':
          break;
        case 'string':
        case 'number':
        case 'boolean':
          if (typeof v !== spec.t || (spec.t === 'number' && !Number.isFinite(v))) throw invalid(param, `Field ${JSON.stringify(param)} must be ${expected[spec.t]}, not ${typeName(v)}.`);
          break;
        case 'named':
        case 'object':
          if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(param, `Field ${JSON.stringify(param)} must be ${expected[spec.t]}, not ${typeName(v)}.`);
          if (spec.t === 'object') stack.push([v as Json, spec.kind, param]);
          break;
        case 'array': {
          if (!Array.isArray(v)) throw invalid(param, `Field ${JSON.stringify(param)} must be an array, not ${typeName(v)}.`);
          for (let i = 0; i < v.length; i++) {
            const e = v[i];
            const at = `${param}.${i}`;
            if (spec.kind === 'any') continue;
            if (spec.kind === 'string') {
              if (typeof e !== 'string') throw invalid(at, `Field ${JSON.stringify(at)} must be a string, not ${typeName(e)}.`);
              continue;
            }
            if (typeof e !== 'object' || e === null || Array.isArray(e)) throw invalid(at, `Field ${JSON.stringify(at)} must be an object, not ${typeName(e)}.`);
            if (isKeptPart(e)) {
              if (passedAs(spec.kind).has(e)) continue;
              kept.push([e, spec.kind]);
            }
            stack.push([e as Json, spec.kind, at]);
          }
          break;
        }
      }
    }
  }
  for (const [e, kind] of kept) passedAs(kind).add(e);
}

/** Kept parts that passed the check, by the kind they were checked as. */
const passed = new Map<Kind, WeakSet<object>>();
function passedAs(kind: Kind): WeakSet<object> {
  let set = passed.get(kind);
  if (set === undefined) passed.set(kind, (set = new WeakSet()));
  return set;
}

/**
 * A copy of a checked body with every member under its camelCase name, down to the objects the client names (which
 * are kept as they are). What translation and the tool filter read; the upstream of a native call gets the body as sent.
 */
export function camelGemini<T = Json>(body: Json, kind: Kind = 'request'): T {
  const { exact } = SPELLINGS.get(kind)!;
  const out: Json = {};
  for (const key of Object.keys(body)) {
    const member = exact.get(key);
    const v = body[key];
    if (member === undefined) {
      out[key] = v;
      continue;
    }
    const spec = SHAPES[kind][member]!;
    if (spec.t === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v)) out[member] = camelGemini(v as Json, spec.kind);
    else if (spec.t === 'array' && Array.isArray(v) && spec.kind !== 'string' && spec.kind !== 'any') {
      const k = spec.kind;
      out[member] = v.map((e) => (e !== null && typeof e === 'object' && !Array.isArray(e) ? camelGemini(e as Json, k) : e));
    } else out[member] = v;
  }
  return out as T;
}

/** The value of a member under either spelling (a checked body has at most one). */
export function memberOf(o: Json, camel: string): unknown {
  const v = o[camel];
  return v !== undefined ? v : o[snakeOf(camel)];
}
