// The one 400 of translation: a sentence saying what to change, and the dotted path of the field to change.
import { AgentgwError } from '../contract/errors.js';

export function invalidField(param: string, message: string): AgentgwError {
  return new AgentgwError('validation_failed', message, { param });
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
