// The one undici module loaded by path (see providers/shared/undici-pool.ts): the package types only its index.
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export default Pool;
}
