// undici's connection pool and its request method alone. The package's index also loads fetch, WebSocket, EventSource,
// caches and mocks (about 3 MB of heap, 8 MB of resident memory and a tenth of a second of start-up the gateway never
// uses), and it is the index that mixes request() into every dispatcher: loaded by path, it is called as a function.
// undici-pool.test.ts holds both to be what the index exports, so an upgrade that moves either fails there.
import type { Dispatcher } from 'undici';
import apiRequest from 'undici/lib/api/api-request.js';
import Pool from 'undici/lib/dispatcher/pool.js';

export { Pool };

/** `dispatcher.request(options)`, whether or not the package index was ever loaded. */
export function request(dispatcher: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return apiRequest.call(dispatcher, options);
}
