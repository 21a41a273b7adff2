import type { AdminClient } from '@agentgw/cli';
import type { TfObject } from '../dynamic-value.js';

/**
 * The admin-API side of one Terraform resource type. States are objects keyed by attribute name,
 * which are the contract's field names; `planned` values are all known by the time apply runs.
 */
export interface ResourceHandler {
  create(client: AdminClient, planned: TfObject): Promise<TfObject>;
  /** The live object as state, or null when it no longer exists. */
  read(client: AdminClient, prior: TfObject): Promise<TfObject | null>;
  update(client: AdminClient, prior: TfObject, planned: TfObject): Promise<TfObject>;
  delete(client: AdminClient, prior: TfObject): Promise<void>;
  /** The state of an existing object named by the id `terraform import` was given. */
  importState(client: AdminClient, id: string): Promise<TfObject>;
}

/** An admin-API refusal that deserves a sentence of its own (e.g. how to import an object that already exists). */
export class HandlerError extends Error {
  public constructor(
    public readonly summary: string,
    detail: string,
  ) {
    super(detail);
  }
}
