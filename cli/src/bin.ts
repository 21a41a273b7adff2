#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 --heap-growing-percent=50
import { buildProgram } from './program.js';

await buildProgram().parseAsync();
