import { fileURLToPath } from 'node:url';

/** The package root, the same from src/ (tests) and dist/ (built): both are two levels below it. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCHEMA_FILE = fileURLToPath(new URL('../../schema/provider-schema.json', import.meta.url));
export const GEN_DIR = fileURLToPath(new URL('../../src/gen/', import.meta.url));
export const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));
