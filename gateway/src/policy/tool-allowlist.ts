// allowed_tools: MCP tools as globs over `server/tool` (null = every tool, [] = none), with the same glob rules as
// allowed_models. Every policy that applies (the agent's and X-Agent-Policy's) must allow the tool.
import { AgentgwError, type Policy } from '../contract/index.js';
import type { Check } from './admitting.js';
import { modelAllowed } from './model-allowlist.js';

/** Whether the globs allow `server/tool`: null = every tool, [] = none. */
export function toolAllowed(allowed: readonly string[] | null | undefined, serverTool: string): boolean {
  return modelAllowed(allowed ?? null, serverTool);
}

/** The policy (of those that apply) that refuses `server/tool`, or undefined when every one allows it. */
export function policyRefusingTool(policies: readonly Policy[], serverTool: string): Policy | undefined {
  return policies.find((p) => !toolAllowed(p.allowed_tools, serverTool));
}

/**
 * Whether a glob names the server, so its resources and prompts are visible (CONTRACT): `github/*` and `git*` do,
 * `github` (no tool part and no `*` to stand for one) does not.
 */
function globNamesServer(glob: string, server: string): boolean {
  const slash = glob.indexOf('/');
  if (slash !== -1) return modelAllowed([glob.slice(0, slash)], server);
  const star = glob.indexOf('*');
  if (star === -1) return false;
  // `*` stands for `/` and what follows it: the part before it must match the start of `server/`.
  const head = glob.slice(0, star);
  const target = `${server}/`;
  if (head.length > target.length) return false;
  for (let i = 0; i < head.length; i++) if (head[i] !== '?' && head[i] !== target[i]) return false;
  return true;
}

/** Whether every policy names the server in some glob of its allowed_tools (null names every server). */
export function serverVisible(policies: readonly Policy[], server: string): boolean {
  return policies.every((p) => p.allowed_tools == null || p.allowed_tools.some((g) => globNamesServer(g, server)));
}

export function toolNotAllowed(serverTool: string, policyId: string): AgentgwError {
  return new AgentgwError(
    'tool_not_allowed',
    `Tool ${serverTool} is not allowed by policy ${policyId}: call a tool from its allowed_tools, or ask an admin to add it.`,
  );
}

/** The tool allow-list, in the place of the model allow-list: `a.model` is the tool as `server/tool`. */
export const toolAllowListCheck: Check = {
  name: 'tool_allow_list',
  run(a) {
    const refusing = policyRefusingTool(a.eff.policies, a.model);
    if (refusing) throw toolNotAllowed(a.model, refusing.id);
  },
};
