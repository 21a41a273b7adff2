export { AgentgwProvider, type AgentgwProviderProps } from './provider.js';
export { Tenant, type TenantProps } from './tenant.js';
export { Policy, type PolicyProps, type PolicyRulesProps, type RetryBlockProps } from './policy.js';
export { Agent, type AgentProps } from './agent.js';
export { Route, type RouteProps, type RouteTargetProps } from './route.js';
