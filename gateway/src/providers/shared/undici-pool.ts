// undici's connection pool alone. The package's index also loads fetch, WebSocket, EventSource, caches and mocks: about
// 3 MB of heap, 8 MB of resident memory and a tenth of a second of start-up that the gateway never uses.
// undici-pool.test.ts holds this to be the very class the index exports, so an upgrade that moves it fails there.
import Pool from 'undici/lib/dispatcher/pool.js';

export { Pool };
