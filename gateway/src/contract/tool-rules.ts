// tool_rules (CONTRACT: "Tool rules and approvals"): the rule format and the syntax of its globs, JSON pointers and
// patterns, checked here so that the admin API, the declarative file and the decision module read them one way.
import { RE2JS } from 're2js';
import { z } from 'zod';

export const TOOL_ACTIONS = ['allow', 'deny', 'approve'] as const;
export const ToolAction = z.enum(TOOL_ACTIONS);

/** The prefix of a pattern that is a regular expression (re2 syntax, run by a linear-time engine) instead of a wildcard. */
export const REGEX_PREFIX = 're:';

/** Characters a tool-name glob may hold besides `*`: what Chat, Messages, Responses and MCP names use, and `/`. */
const TOOL_GLOB = /^[A-Za-z0-9_.:\/@+-]*$/;

/** Why a tool-name glob is not one, or null when it is. Globs: `*` any run of characters; nothing else is special. */
export function toolGlobProblem(glob: string): string | null {
  if (glob.length === 0) return 'is empty: name a tool such as "Bash" or a glob such as "mcp__github__*"';
  if (!TOOL_GLOB.test(glob.replace(/\*/g, ''))) {
    return `${JSON.stringify(glob)} is not a tool glob: use tool names (letters, digits, _ . : / @ + -) and * for any run of characters`;
  }
  return null;
}

/** The reference tokens of a JSON pointer (RFC 6901), or null when it is not one. */
export function jsonPointerTokens(pointer: string): string[] | null {
  if (!pointer.startsWith('/')) return null;
  const tokens = pointer.slice(1).split('/');
  for (const t of tokens) if (/~(?![01])/.test(t)) return null;
  return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Why a `when` key is not an argument name or a JSON pointer, or null when it is one. */
export function whenArgProblem(arg: string): string | null {
  if (arg.length === 0) return 'is empty: name a top-level argument ("command") or a JSON pointer ("/edits/0/file_path")';
  if (arg.startsWith('/') && jsonPointerTokens(arg) === null) {
    return `${JSON.stringify(arg)} is not a JSON pointer: write ~0 for "~" and ~1 for "/" inside a segment`;
  }
  return null;
}

/** A `re:` pattern compiled by the linear-time engine; throws the engine's error when it rejects the expression. */
export function compileToolRegex(pattern: string): RE2JS {
  return RE2JS.compile(pattern.slice(REGEX_PREFIX.length));
}

/** Why a `when` pattern cannot be used, or null when it can. Wildcards always can; `re:` must compile. */
export function whenPatternProblem(pattern: string): string | null {
  if (!pattern.startsWith(REGEX_PREFIX)) return null;
  try {
    compileToolRegex(pattern);
    return null;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return `${JSON.stringify(pattern)} is not a regular expression the linear-time engine (RE2 syntax) accepts: ${why} (lookarounds and backreferences are not supported)`;
  }
}

const Pattern = z.string().max(1000);
const Patterns = z.union([Pattern, z.array(Pattern).min(1).max(100)]);

export const ToolRule = z
  .strictObject({
    tools: z
      .array(z.string().max(200))
      .min(1)
      .max(100)
      .describe('Tool names or globs (`*` any run of characters): the declared name (Bash, exec_command), a built-in Responses kind (shell, web_search), or server/tool on /mcp.'),
    when: z
      .record(z.string().max(500), Patterns)
      .optional()
      .describe('ARG -> pattern or list of patterns. ARG: a top-level argument name, a JSON pointer (/edits/0/file_path), or `input` for a call whose input is one string. Pattern: a wildcard matched against the whole value (`*` any run, `?` one character) or `re:` and an RE2 expression (searched; anchor with ^ and $). Every ARG must match; one pattern of a list is enough.'),
    action: ToolAction,
    reason: z.string().min(1).max(500).optional().describe('Said in the refusal sentence and the trace.'),
  })
  .superRefine((rule, ctx) => {
    rule.tools.forEach((glob, i) => {
      const problem = toolGlobProblem(glob);
      if (problem) ctx.addIssue({ code: 'custom', path: ['tools', i], message: `tool glob ${problem}` });
    });
    for (const [arg, patterns] of Object.entries(rule.when ?? {})) {
      // Error params join the path with dots: a pointer (holding slashes) is named in the message instead.
      const at = arg.includes('/') ? ['when'] : ['when', arg];
      const argProblem = whenArgProblem(arg);
      if (argProblem) ctx.addIssue({ code: 'custom', path: at, message: `argument ${argProblem}` });
      (typeof patterns === 'string' ? [patterns] : patterns).forEach((p, i) => {
        const problem = whenPatternProblem(p);
        const where = arg.includes('/') ? `pattern of ${JSON.stringify(arg)} ` : '';
        if (problem) ctx.addIssue({ code: 'custom', path: typeof patterns === 'string' || at.length === 1 ? at : [...at, i], message: `${where}${problem}` });
      });
    }
  })
  .meta({ id: 'ToolRule' });
export type ToolRule = z.infer<typeof ToolRule>;

/** The ordered rules of a policy: the first that matches a call decides it; no match allows it. */
export const ToolRules = z.array(ToolRule).max(200);
