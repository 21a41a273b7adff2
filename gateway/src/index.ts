export * from './contract/index.js';
export { buildApp, type AppOptions } from './app.js';
export { startServer, type RunningServer, type StartOptions } from './server.js';
export { loadConfig, GatewayConfig, ConfigError } from './config.js';
export { createRuntime, type Runtime } from './runtime.js';
export type { Services } from './services.js';
