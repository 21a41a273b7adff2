// Tool rules (CONTRACT: "Tool rules and approvals"): one decision module for every dialect and /mcp.
// THE INTERFACE BELOW IS AGREED WITH THE ENGINEER BUILDING THE DIALECT SIDE (answers and streams): keep these exports and
// their meaning exactly; add more if needed.
//
// A model writes the arguments, so it may write them to slip past a rule: odd spacing, look-alike characters, a key given
// twice. A call is decided on every reading a client could make of it (the value JSON.parse keeps and the first value of
// a repeated key; the text as written and with its spacing and Unicode forms normalised) and the strictest decision
// stands: a reading can only make a call stricter, never let through what the plain reading refuses.
import type { RE2JS } from 're2js';
import { compileToolRegex, jsonPointerTokens, REGEX_PREFIX, type Policy, type ToolRule } from '../contract/index.js';
import { repeatsKey } from '../json/repeated-keys.js';
import type { EffectivePolicy } from './effective-policy.js';

/** One call a model proposed (or a call on /mcp), as the rules read it. */
export interface ProposedToolCall {
  /** What the rules match: the declared function name (`Bash`, `exec_command`); a built-in Responses call's kind
   *  (`shell`, `local_shell`, `apply_patch`, `computer`, `web_search`, `mcp/<server_label>/<name>`); `server/tool` on /mcp. */
  name: string;
  /** The arguments as parsed (an object; for a custom tool whose input is one string, that string); undefined when the
   *  text is not JSON. */
  input: unknown;
  /** The raw argument text as the model wrote it. */
  text: string;
}
export type ToolAction = 'allow' | 'deny' | 'approve';
export interface ToolDecision {
  action: ToolAction;
  /** The policy and the 1-based index of the rule that decided; null when no rule matched (allow). */
  policyId: string | null;
  rule: number | null;
  reason: string | null;
}
export interface ToolRules {
  /** Decides one call: each policy's first matching rule; a deny in any policy wins over approve, approve over allow. */
  decide(call: ProposedToolCall): ToolDecision;
  /** Some policy denies this tool name with a rule that has no `when`: leave it out of the tools the request offers. */
  deniesOutright(name: string): boolean;
}

/** The compiled rules of the request's effective policies (cached per policy version); null when none has tool_rules,
 *  in which case nothing is held, edited or recorded differently from before. */
export function toolRulesOf(eff: EffectivePolicy): ToolRules | null {
  let first: CompiledPolicy | null = null;
  let all: CompiledPolicy[] | null = null;
  for (const policy of eff.policies) {
    const compiled = compiledPolicy(policy);
    if (compiled === null) continue;
    if (first === null) first = compiled;
    else (all ??= [first]).push(compiled);
  }
  return all ? new PolicySet(all) : first;
}

/** `agentgw refused the call to <tool>: <reason> (policy <id>, rule <n>)` (reason defaults to "denied by policy"). */
export function refusalSentence(tool: string, d: ToolDecision): string {
  const where = d.policyId !== null && d.rule !== null ? ` (policy ${d.policyId}, rule ${d.rule})` : '';
  return `agentgw refused the call to ${tool}: ${d.reason ?? 'denied by policy'}${where}`;
}

/**
 * The call view of arguments given as JSON text (Chat, Responses, /mcp): `input` is undefined when the text is not JSON;
 * empty text (a call without arguments, as Chat writes it) is no arguments.
 */
export function proposedToolCall(name: string, text: string): ProposedToolCall {
  let input: unknown;
  try {
    input = text === '' ? {} : JSON.parse(text);
  } catch {
    input = undefined;
  }
  return { name, input, text };
}

/** The reason of an `approve` decided where no one can approve it yet. */
export const APPROVALS_NOT_ENABLED = 'needs approval, and approvals are not enabled';

/** A decision as it stands without approvals: an `approve` is a deny (fail closed), naming why; others as they are. */
export function withoutApprovals(d: ToolDecision): ToolDecision {
  return d.action === 'approve' ? { ...d, action: 'deny', reason: APPROVALS_NOT_ENABLED } : d;
}

export const NO_RULE: ToolDecision = Object.freeze({ action: 'allow', policyId: null, rule: null, reason: null });

const STRICTNESS: Record<ToolAction, number> = { allow: 0, approve: 1, deny: 2 };

// ---- readings of a call ----

/** One reading of a call's arguments: which parsed value, and whether texts are read normalised. */
interface Reading {
  input: unknown;
  normalised: boolean;
}

/**
 * The parsed values a client could take from the call: JSON.parse's, and, when the text repeats a key, the first-wins
 * one. Text JSON.parse refuses may still be read by a client whose parser takes `NaN` or `Infinity` (Python's json does):
 * it is read that way too, those words as null.
 */
function inputsOf(call: ProposedToolCall): unknown[] {
  const { input, text } = call;
  if (input === undefined && typeof text === 'string') {
    const lenient = firstWinsValue(text);
    return lenient === TOO_DEEP || lenient === INVALID ? [input] : [input, lenient];
  }
  if (input === undefined || typeof input === 'string' || typeof text !== 'string' || !repeatsKey(text)) return [input];
  const first = firstWinsValue(text);
  // Too deep to read again: also decide as if it could not be parsed, which only matches rules without `when`.
  return first === TOO_DEEP ? [input, undefined] : first === INVALID ? [input] : [input, first];
}

const TOO_DEEP = Symbol('too deep');
const INVALID = Symbol('invalid');
const MAX_DEPTH = 256;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** The value of JSON text keeping the first of repeated keys (as some parsers do); INVALID or TOO_DEEP otherwise. */
function firstWinsValue(text: string): unknown {
  let i = 0;
  const space = () => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  };
  const string = (): string => {
    STRING.lastIndex = i;
    const m = STRING.exec(text);
    if (!m) throw INVALID;
    i = STRING.lastIndex;
    return m[0].indexOf('\\') === -1 ? m[0].slice(1, -1) : (JSON.parse(m[0]) as string);
  };
  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) throw TOO_DEEP;
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      const object: Record<string, unknown> = {};
      space();
      if (text[i] === '}') return i++, object;
      for (;;) {
        space();
        const key = string();
        space();
        if (text[i++] !== ':') throw INVALID;
        const v = value(depth + 1);
        // Own data properties, `__proto__` included, as JSON.parse makes them.
        if (!Object.hasOwn(object, key)) Object.defineProperty(object, key, { value: v, enumerable: true, writable: true, configurable: true });
        space();
        const sep = text[i++];
        if (sep === '}') return object;
        if (sep !== ',') throw INVALID;
      }
    }
    if (c === '[') {
      i++;
      const array: unknown[] = [];
      space();
      if (text[i] === ']') return i++, array;
      for (;;) {
        array.push(value(depth + 1));
        space();
        const sep = text[i++];
        if (sep === ']') return array;
        if (sep !== ',') throw INVALID;
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [['true', true], ['false', false], ['null', null], ['NaN', null], ['Infinity', null], ['-Infinity', null]] as const) {
      if (text.startsWith(word, i)) return (i += word.length), v;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) throw INVALID;
    i = NUMBER.lastIndex;
    return Number(m[0]);
  };
  try {
    const v = value(0);
    space();
    return i === text.length ? v : INVALID;
  } catch (e) {
    if (e === TOO_DEEP || e === INVALID) return e;
    return INVALID;
  }
}

/** Text as written, or in printable ASCII with single inner spaces: the common case, which normalising leaves alone. */
const PLAIN = /^(?:[\x21-\x7e]+(?: [\x21-\x7e]+)*)?$/;
const SPACE = /\s/u;

/**
 * A value as a shell or a file system would more likely read it: compatibility forms folded (NFKC: full-width letters,
 * ligatures), invisible format and control characters dropped, every run of white space one space, none at the ends.
 */
export function normaliseToolText(text: string): string {
  if (PLAIN.test(text)) return text;
  return text
    .normalize('NFKC')
    .replace(/[\p{Cf}\p{Cc}]/gu, (c) => (SPACE.test(c) ? ' ' : ''))
    .replace(/\s+/gu, ' ')
    .trim();
}

/** Whether every string in a parsed value is one normalising leaves alone (then so is any text a pattern reads of it). */
function normalFormStrings(v: unknown, depth = 0): boolean {
  // An empty string is not: an argv with one joins into a double space (`rm "" -rf /`).
  if (typeof v === 'string') return v !== '' && PLAIN.test(v);
  if (typeof v !== 'object' || v === null) return true;
  if (depth > MAX_DEPTH) return false;
  for (const e of Array.isArray(v) ? v : Object.values(v)) if (!normalFormStrings(e, depth + 1)) return false;
  return true;
}

// ---- patterns ----

interface TextMatcher {
  test(text: string, normalised: boolean): boolean;
}

/**
 * A wildcard: `*` any run of characters (slashes and spaces included), `?` one character (a code point), the rest
 * literal, matched against the whole value. Runs in time linear in the value per segment: no backtracking regex.
 */
class Wildcard implements TextMatcher {
  private readonly raw: Segments;
  private readonly norm: Segments;
  constructor(pattern: string) {
    this.raw = new Segments(pattern);
    this.norm = new Segments(normaliseToolText(pattern));
  }
  test(text: string, normalised: boolean): boolean {
    return (normalised ? this.norm : this.raw).match(text);
  }
}

/** A wildcard split at its stars; each segment's characters, with null for `?`. */
class Segments {
  private readonly parts: string[];
  private readonly anyOne: boolean;
  private readonly chars: Array<Array<string | null>>;
  constructor(pattern: string) {
    this.parts = pattern.split('*');
    this.anyOne = pattern.includes('?');
    this.chars = this.parts.map((p) => Array.from(p, (c) => (c === '?' ? null : c)));
  }
  match(text: string): boolean {
    return this.anyOne ? this.matchChars(Array.from(text)) : this.matchLiteral(text);
  }
  private matchLiteral(text: string): boolean {
    const parts = this.parts;
    if (parts.length === 1) return text === parts[0];
    const head = parts[0]!;
    const tail = parts[parts.length - 1]!;
    if (head.length + tail.length > text.length || !text.startsWith(head) || !text.endsWith(tail)) return false;
    let at = head.length;
    const end = text.length - tail.length;
    for (let k = 1; k < parts.length - 1; k++) {
      const found = text.indexOf(parts[k]!, at);
      if (found === -1 || found + parts[k]!.length > end) return false;
      at = found + parts[k]!.length;
    }
    return true;
  }
  private matchChars(text: string[]): boolean {
    const parts = this.chars;
    const at = (seg: Array<string | null>, i: number) => seg.every((c, j) => c === null || c === text[i + j]);
    if (parts.length === 1) return parts[0]!.length === text.length && at(parts[0]!, 0);
    const head = parts[0]!;
    const tail = parts[parts.length - 1]!;
    const end = text.length - tail.length;
    if (head.length > end || !at(head, 0) || !at(tail, end)) return false;
    let i = head.length;
    for (let k = 1; k < parts.length - 1; k++) {
      const seg = parts[k]!;
      while (i + seg.length <= end && !at(seg, i)) i++;
      if (i + seg.length > end) return false;
      i += seg.length;
    }
    return true;
  }
}

/** `re:EXPR`: searched in the value (anchor with ^ and $), by re2js in linear time. */
class Regex implements TextMatcher {
  constructor(private readonly re: RE2JS) {}
  test(text: string): boolean {
    return this.re.test(text);
  }
}

/** A pattern stored before it could be checked and that does not compile: it matches, unless that would allow a call. */
class Broken implements TextMatcher {
  constructor(private readonly matches: boolean) {}
  test(): boolean {
    return this.matches;
  }
}

function compilePattern(pattern: string, action: ToolAction): TextMatcher {
  if (!pattern.startsWith(REGEX_PREFIX)) return new Wildcard(pattern);
  try {
    return new Regex(compileToolRegex(pattern));
  } catch {
    return new Broken(action !== 'allow');
  }
}

// ---- arguments ----

const MISSING = Symbol('missing');

/** A top-level argument, a JSON pointer's tokens, or nothing (a pointer stored before it could be checked). */
type ArgPath = { key: string } | { pointer: string[] } | { nothing: true };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const INDEX = /^(?:0|[1-9]\d*)$/;

/** The value an ARG names in the input, or MISSING. */
function argValue(input: unknown, path: ArgPath): unknown {
  if ('nothing' in path) return MISSING;
  if ('key' in path) {
    if (typeof input === 'string') return path.key === 'input' ? input : MISSING;
    return isObject(input) && Object.hasOwn(input, path.key) ? input[path.key] : MISSING;
  }
  let v = input;
  for (const token of path.pointer) {
    if (Array.isArray(v)) {
      if (!INDEX.test(token) || Number(token) >= v.length) return MISSING;
      v = v[Number(token)];
    } else if (isObject(v) && Object.hasOwn(v, token)) {
      v = v[token];
    } else {
      return MISSING;
    }
  }
  return v;
}

/** The text a pattern reads: a string as is, an array of strings (an argv) joined with spaces, anything else as JSON. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((e) => typeof e === 'string')) return v.join(' ');
  return JSON.stringify(v) ?? '';
}

interface Condition {
  path: ArgPath;
  patterns: TextMatcher[];
}

function conditionHolds(c: Condition, reading: Reading): boolean {
  const v = argValue(reading.input, c.path);
  if (v === MISSING) return false;
  let text = valueText(v);
  if (reading.normalised) text = normaliseToolText(text);
  return c.patterns.some((p) => p.test(text, reading.normalised));
}

// ---- rules and policies ----

interface CompiledRule {
  names: Segments[];
  /** null: the rule has no `when` (an empty `when` is none). */
  when: Condition[] | null;
  decision: ToolDecision;
}

function compileRule(rule: ToolRule, policyId: string, index: number): CompiledRule {
  const entries = Object.entries(rule.when ?? {});
  return {
    names: rule.tools.map((glob) => new Segments(glob)),
    when:
      entries.length === 0
        ? null
        : entries.map(([arg, patterns]) => {
            const pointer = arg.startsWith('/') ? jsonPointerTokens(arg) : undefined;
            return {
              path: pointer === undefined ? { key: arg } : pointer === null ? { nothing: true as const } : { pointer },
              patterns: (typeof patterns === 'string' ? [patterns] : patterns).map((p) => compilePattern(p, rule.action)),
            };
          }),
    decision: Object.freeze({ action: rule.action, policyId, rule: index + 1, reason: rule.reason ?? null }),
  };
}

/** Names seen per policy, each with the rules that name it; bounded, as names come from models. */
const MAX_NAMES = 1_000;

class CompiledPolicy implements ToolRules {
  private readonly byName = new Map<string, CompiledRule[]>();
  private readonly outright = new Map<string, boolean>();
  constructor(
    private readonly rules: CompiledRule[],
    /** Every wildcard of the policy reads the same normalised: only texts that change make the normalised reading differ. */
    readonly normalFormWildcards: boolean,
  ) {}

  /** The rules whose globs name the tool, in order. */
  rulesFor(name: string): CompiledRule[] {
    let rules = this.byName.get(name);
    if (rules === undefined) {
      rules = this.rules.filter((r) => r.names.some((g) => g.match(name)));
      if (this.byName.size >= MAX_NAMES) this.byName.clear();
      this.byName.set(name, rules);
    }
    return rules;
  }

  /** The first rule that matches under one reading, or NO_RULE. */
  decideIn(rules: CompiledRule[], reading: Reading): ToolDecision {
    for (const r of rules) {
      if (r.when === null || r.when.every((c) => conditionHolds(c, reading))) return r.decision;
    }
    return NO_RULE;
  }

  decide(call: ProposedToolCall): ToolDecision {
    return decideAll([this], call);
  }

  deniesOutright(name: string): boolean {
    let denies = this.outright.get(name);
    if (denies === undefined) {
      denies = false;
      // Rules that may match some arguments come first: the name is denied outright only if each of them denies too.
      for (const r of this.rulesFor(name)) {
        if (r.when === null) {
          denies = r.decision.action === 'deny';
          break;
        }
        if (r.decision.action !== 'deny') break;
      }
      if (this.outright.size >= MAX_NAMES) this.outright.clear();
      this.outright.set(name, denies);
    }
    return denies;
  }
}

/** Two policies (the agent's and X-Agent-Policy's): both decide, the stricter stands. */
class PolicySet implements ToolRules {
  constructor(private readonly policies: CompiledPolicy[]) {}
  decide(call: ProposedToolCall): ToolDecision {
    return decideAll(this.policies, call);
  }
  deniesOutright(name: string): boolean {
    return this.policies.some((p) => p.deniesOutright(name));
  }
}

/**
 * The strictest decision over every reading and policy; of equally strict ones, the earliest policy's lowest rule (the
 * rule that reads best in the refusal), and a rule over no rule.
 */
function decideAll(policies: readonly CompiledPolicy[], call: ProposedToolCall): ToolDecision {
  const ruleLists = policies.map((p) => p.rulesFor(call.name));
  // Only rules with `when` read the arguments; without them one reading decides.
  const readsArguments = ruleLists.some((rules) => rules.some((r) => r.when !== null));
  // The normalised reading can differ only where a text or a wildcard changes when normalised.
  const readings: Reading[] = readsArguments
    ? inputsOf(call).flatMap((input) =>
        policies.every((p) => p.normalFormWildcards) && normalFormStrings(input) ? [{ input, normalised: false }] : [{ input, normalised: false }, { input, normalised: true }],
      )
    : [{ input: call.input, normalised: false }];
  let best = NO_RULE;
  let bestPolicy = Infinity;
  for (const reading of readings) {
    for (let i = 0; i < policies.length; i++) {
      const d = policies[i]!.decideIn(ruleLists[i]!, reading);
      if (d.rule === null) continue;
      const more = STRICTNESS[d.action] - STRICTNESS[best.action];
      if (more > 0 || (more === 0 && (best.rule === null || i < bestPolicy || (i === bestPolicy && d.rule < best.rule)))) {
        best = d;
        bestPolicy = i;
      }
    }
  }
  return best;
}

const compiled = new WeakMap<Policy, CompiledPolicy | null>();

/** A policy's rules compiled once per policy object (a new object per stored version); null when it has none. */
function compiledPolicy(policy: Policy): CompiledPolicy | null {
  let c = compiled.get(policy);
  if (c === undefined) {
    const rules = policy.tool_rules;
    const wildcards = (rules ?? []).flatMap((r) => Object.values(r.when ?? {}).flat()).filter((p) => !p.startsWith(REGEX_PREFIX));
    c = rules && rules.length > 0 ? new CompiledPolicy(rules.map((r, i) => compileRule(r, policy.id, i)), wildcards.every((p) => PLAIN.test(p))) : null;
    compiled.set(policy, c);
  }
  return c;
}
