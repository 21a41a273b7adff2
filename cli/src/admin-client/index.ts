export { AdminClient, ignoreNotFound, type AdminClientOptions } from './admin-client.js';
export { AdminApiError, AdminConnectionError, isAdminApiError } from './errors.js';
export type * from './types.js';
