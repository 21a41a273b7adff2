import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../gateway/src/test-support/gateway.js';
import { buildWorkspace } from '../test-support/build.js';
import { connect, promisify, startPlugin, type PluginConnection } from '../test-support/plugin-client.js';
import { conformObject } from './conform.js';
import { decodeDynamicValue, encodeDynamicValue, isUnknown, UNKNOWN, type TfObject } from './dynamic-value.js';
import { providerSchema } from './provider-schema-file.js';
import { selfSignedCertificate } from './self-signed-cert.js';

type Type = 'agentgw_tenant' | 'agentgw_policy' | 'agentgw_agent';

/** A full object of the resource's type (unset attributes null), as terraform sends it. */
const dv = (type: Type, value: Record<string, unknown> | null) =>
  encodeDynamicValue(conformObject(value, providerSchema().resource_schemas[type].block.attributes));
const providerConfig = (value: Record<string, unknown>) =>
  encodeDynamicValue(conformObject(value, providerSchema().provider.block.attributes));
const decoded = (v: { msgpack: Buffer }) => decodeDynamicValue(v) as TfObject | null;
/** A state as terraform holds it: every attribute of the type, unset ones null. */
const full = (type: Type, value: Record<string, unknown>) => decoded(dv(type, value));
const NULL = encodeDynamicValue(null);

describe('terraform-provider-agentgw over gRPC, as terraform drives it', () => {
  let gw: TestGateway;
  let plugin: PluginConnection;
  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${gw.adminUrl}${path}`, { ...init, headers: { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' } });

  /** Plan then apply one change, returning the planned and the new state. */
  async function planApply(type: Type, prior: TfObject | null, config: Record<string, unknown> | null) {
    const plan = await plugin.provider.PlanResourceChange({
      type_name: type,
      prior_state: prior ? dv(type, prior) : NULL,
      proposed_new_state: config ? dv(type, { ...prior, ...config }) : NULL,
      config: config ? dv(type, config) : NULL,
    });
    expect(plan.diagnostics).toEqual([]);
    const applied = await plugin.provider.ApplyResourceChange({
      type_name: type,
      prior_state: prior ? dv(type, prior) : NULL,
      planned_state: plan.planned_state,
      config: config ? dv(type, config) : NULL,
    });
    return { plan, planned: decoded(plan.planned_state), applied, state: decoded(applied.new_state) };
  }

  beforeAll(async () => {
    buildWorkspace();
    gw = await startTestGateway();
    plugin = await startPlugin();
  });

  afterAll(async () => {
    await plugin?.close();
    await gw?.close();
  });

  it('prints the go-plugin handshake line with its own certificate', () => {
    const [core, version, network, address, protocol, cert] = plugin.handshake;
    expect([core, version, network, protocol]).toEqual(['1', '6', 'tcp', 'grpc']);
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(cert).not.toMatch(/=$/);
    const x509 = new X509Certificate(plugin.serverCertPem);
    expect(x509.subjectAltName).toContain('DNS:localhost');
    expect(x509.verify(x509.publicKey)).toBe(true);
  });

  it('answers the health check go-plugin pings', async () => {
    expect(await plugin.health.Check({ service: 'plugin' })).toEqual({ status: 'SERVING' });
  });

  it('refuses a client whose certificate it was not given', async () => {
    const [stranger] = connect(plugin.handshake[3], plugin.serverCertPem, selfSignedCertificate());
    await expect(promisify(stranger).GetProviderSchema({})).rejects.toMatchObject({ code: 14 });
    stranger.close();
  });

  it('serves the generated schema', async () => {
    const res = await plugin.provider.GetProviderSchema({});
    expect(res.diagnostics).toEqual([]);
    expect(Object.keys(res.resource_schemas).sort()).toEqual(['agentgw_agent', 'agentgw_policy', 'agentgw_route', 'agentgw_tenant']);
    const attr = (type: string, name: string) => res.resource_schemas[type].block.attributes.find((a: { name: string }) => a.name === name);
    expect(attr('agentgw_agent', 'api_key')).toMatchObject({ computed: true, sensitive: true, type: Buffer.from('"string"') });
    expect(attr('agentgw_tenant', 'id')).toMatchObject({ required: true });
    expect(attr('agentgw_policy', 'allowed_models').type.toString()).toBe('["list","string"]');
    const rules = attr('agentgw_policy', 'rules');
    expect(rules.nested_type.nesting).toBe('SINGLE');
    expect(rules.nested_type.attributes.map((a: { name: string }) => a.name)).toContain('retry_block');
    const targets = attr('agentgw_route', 'targets');
    expect(targets).toMatchObject({ required: true });
    expect(targets.nested_type.nesting).toBe('LIST');
    expect(targets.nested_type.attributes.map((a: { name: string }) => a.name).sort()).toEqual(['model', 'priority', 'rpm', 'tpm', 'weight']);
    expect(attr('agentgw_route', 'alias')).toMatchObject({ required: true });
    expect(res.provider.block.attributes.find((a: { name: string }) => a.name === 'admin_key')).toMatchObject({ sensitive: true, optional: true });
    const meta = await plugin.provider.GetMetadata({});
    expect(meta.resources.map((r: { type_name: string }) => r.type_name).sort()).toEqual(['agentgw_agent', 'agentgw_policy', 'agentgw_route', 'agentgw_tenant']);
  });

  it('validates configurations against the contract, naming the attribute', async () => {
    const bad = await plugin.provider.ValidateResourceConfig({ type_name: 'agentgw_tenant', config: dv('agentgw_tenant', { id: 'Not An Id', name: 'x' }) });
    expect(bad.diagnostics).toHaveLength(1);
    expect(bad.diagnostics[0]).toMatchObject({ severity: 'ERROR', attribute: { steps: [{ attribute_name: 'id' }] } });
    const budget = await plugin.provider.ValidateResourceConfig({
      type_name: 'agentgw_policy',
      config: dv('agentgw_policy', { id: 'p', monthly_budget: -1, rules: { pii: 'loud' } }),
    });
    expect(budget.diagnostics.map((d: any) => d.attribute.steps.map((s: any) => s.attribute_name).join('.')).sort()).toEqual(['monthly_budget', 'rules.pii']);
    // A reference to another resource is unknown at validation: the server checks it at apply.
    const unknown = await plugin.provider.ValidateResourceConfig({ type_name: 'agentgw_agent', config: dv('agentgw_agent', { name: 'bot', tenant_id: UNKNOWN }) });
    expect(unknown.diagnostics).toEqual([]);
    const provider = await plugin.provider.ValidateProviderConfig({ config: providerConfig({ admin_url: 'ftp://x' }) });
    expect(provider.diagnostics[0].attribute.steps[0].attribute_name).toBe('admin_url');
  });

  it('configures from the provider block', async () => {
    const res = await plugin.provider.ConfigureProvider({ terraform_version: '1.11.4', config: providerConfig({ admin_url: gw.adminUrl, admin_key: gw.adminKey }) });
    expect(res.diagnostics).toEqual([]);
  });

  it('creates, reads, updates, imports and deletes a tenant, a policy and an agent', async () => {
    const tenant = await planApply('agentgw_tenant', null, { id: 'acme', name: 'Acme Inc.' });
    expect(tenant.applied.diagnostics).toEqual([]);
    expect(tenant.state).toEqual(full('agentgw_tenant', { id: 'acme', name: 'Acme Inc.' }));

    const policyConfig = {
      id: 'support-standard',
      tenant_id: 'acme',
      monthly_budget: 250,
      allowed_models: ['openai/*'],
      rules: { pii: 'block', retry_block: { max_repeats: 3, window_seconds: 300 }, max_cost_per_request: 0.5 },
    };
    const policy = await planApply('agentgw_policy', null, policyConfig);
    expect(policy.applied.diagnostics).toEqual([]);
    expect(policy.state).toEqual(decoded(dv('agentgw_policy', policyConfig)));
    expect(await (await admin('/policies/support-standard')).json()).toMatchObject({ monthly_budget: 250, rules: { pii: 'block', pii_types: expect.any(Array) } });

    // Create: the server assigns id, key_prefix and api_key, so the plan leaves them unknown.
    const agentConfig = { name: 'support-bot', tenant_id: 'acme', policy_id: 'support-standard' };
    const agent = await planApply('agentgw_agent', null, agentConfig);
    expect(isUnknown(agent.planned!.id)).toBe(true);
    expect(isUnknown(agent.planned!.api_key)).toBe(true);
    expect(isUnknown(agent.planned!.key_prefix)).toBe(true);
    expect(agent.applied.diagnostics).toEqual([]);
    const created = agent.state!;
    expect(created).toMatchObject({ ...agentConfig, labels: null });
    expect(String(created.api_key)).toMatch(/^agk_/);
    expect(String(created.api_key).startsWith(String(created.key_prefix))).toBe(true);
    const models = await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${created.api_key}` } });
    expect(models.status).toBe(200);

    // Read keeps the key the server showed once, and finds no drift.
    const read = await plugin.provider.ReadResource({ type_name: 'agentgw_agent', current_state: dv('agentgw_agent', created) });
    expect(read.diagnostics).toEqual([]);
    expect(decoded(read.new_state)).toEqual(created);
    const readPolicy = await plugin.provider.ReadResource({ type_name: 'agentgw_policy', current_state: dv('agentgw_policy', policy.state) });
    expect(decoded(readPolicy.new_state)).toEqual(policy.state);

    // A changed budget is an in-place update.
    const cheaper = await planApply('agentgw_policy', policy.state, { ...policyConfig, monthly_budget: 100 });
    expect(cheaper.plan.requires_replace).toEqual([]);
    expect(cheaper.state!.monthly_budget).toBe(100);
    expect(await (await admin('/policies/support-standard')).json()).toMatchObject({ monthly_budget: 100 });

    // Server-side drift shows in ReadResource; removing a rule from the config clears it on the server.
    await admin('/policies/support-standard', { method: 'PUT', body: JSON.stringify({ rules: { rpm: 7 } }) });
    const drifted = decoded((await plugin.provider.ReadResource({ type_name: 'agentgw_policy', current_state: dv('agentgw_policy', cheaper.state) })).new_state);
    expect((drifted!.rules as TfObject).rpm).toBe(7);
    const reverted = await planApply('agentgw_policy', drifted, { ...policyConfig, monthly_budget: 100 });
    expect((reverted.state!.rules as TfObject).rpm).toBeNull();
    expect(await (await admin('/policies/support-standard')).json()).toMatchObject({ rules: { rpm: null } });

    // A new owner tenant cannot be set in place.
    const moved = await plugin.provider.PlanResourceChange({
      type_name: 'agentgw_agent',
      prior_state: dv('agentgw_agent', created),
      proposed_new_state: dv('agentgw_agent', { ...created, tenant_id: 'other' }),
      config: dv('agentgw_agent', { ...agentConfig, tenant_id: 'other' }),
    });
    expect(moved.requires_replace).toEqual([{ steps: [{ attribute_name: 'tenant_id', selector: 'attribute_name' }] }]);
    expect(isUnknown(decoded(moved.planned_state)!.id)).toBe(true);

    // An in-place agent update keeps id and key.
    const renamed = await planApply('agentgw_agent', created, { ...agentConfig, name: 'support-bot-2', labels: { team: 'support' } });
    expect(renamed.plan.requires_replace).toEqual([]);
    expect(renamed.planned).toMatchObject({ id: created.id, api_key: created.api_key });
    expect(renamed.state).toMatchObject({ id: created.id, name: 'support-bot-2', labels: { team: 'support' }, api_key: created.api_key });

    // Import by id and by TENANT/NAME: no key (the server never shows it again).
    for (const id of [String(created.id), 'acme/support-bot-2']) {
      const imported = await plugin.provider.ImportResourceState({ type_name: 'agentgw_agent', id });
      expect(imported.diagnostics).toEqual([]);
      expect(decoded(imported.imported_resources[0].state)).toEqual({ ...renamed.state, api_key: null });
    }
    const importedPolicy = await plugin.provider.ImportResourceState({ type_name: 'agentgw_policy', id: 'support-standard' });
    expect(decoded(importedPolicy.imported_resources[0].state)).toEqual(reverted.state);
    const missing = await plugin.provider.ImportResourceState({ type_name: 'agentgw_tenant', id: 'nope' });
    expect(missing.diagnostics[0].detail).toMatch(/tenant/i);

    // Creating what already exists points at import instead of taking it over.
    const again = await planApply('agentgw_policy', null, policyConfig);
    expect(again.applied.diagnostics[0].detail).toContain('terraform import agentgw_policy.NAME support-standard');

    // Delete in dependency order; a deleted object reads as gone.
    for (const [type, state] of [['agentgw_agent', renamed.state], ['agentgw_policy', reverted.state], ['agentgw_tenant', tenant.state]] as const) {
      const gone = await planApply(type, state, null);
      expect(gone.planned).toBeNull();
      expect(gone.applied.diagnostics).toEqual([]);
      expect(gone.state).toBeNull();
      const after = await plugin.provider.ReadResource({ type_name: type, current_state: dv(type, state) });
      expect(decoded(after.new_state)).toBeNull();
    }
    expect(await (await admin('/tenants')).json()).toMatchObject({ data: [] });
  });

  it('upgrades a stored JSON state to the current shape', async () => {
    const res = await plugin.provider.UpgradeResourceState({
      type_name: 'agentgw_tenant',
      version: 0,
      raw_state: { json: Buffer.from(JSON.stringify({ id: 'acme', name: 'Acme' })) },
    });
    expect(res.diagnostics).toEqual([]);
    expect(decoded(res.upgraded_state)).toEqual(full('agentgw_tenant', { id: 'acme', name: 'Acme' }));
  });

  it('plans a reference to a tenant or policy that neither the configuration nor the gateway has as an error on that attribute', async () => {
    const plan = (type: Type, config: Record<string, unknown>) =>
      plugin.provider.PlanResourceChange({ type_name: type, prior_state: NULL, proposed_new_state: dv(type, config), config: dv(type, config) });
    const orphan = await plan('agentgw_agent', { name: 'orphan', tenant_id: 'no-such-tenant', policy_id: 'no-such-policy' });
    expect(orphan.diagnostics.map((d: any) => [d.summary, d.attribute.steps[0].attribute_name])).toEqual([
      ['Unknown tenant', 'tenant_id'],
      ['Unknown policy', 'policy_id'],
    ]);
    expect(orphan.diagnostics[1].detail).toContain('policy_id names policy "no-such-policy", which neither this configuration nor the gateway has');
    // what this run plans to create counts: terraform plans a referenced object before the objects that refer to it
    expect((await plan('agentgw_tenant', { id: 'later', name: 'Later' })).diagnostics).toEqual([]);
    expect((await plan('agentgw_policy', { id: 'later-policy', tenant_id: 'later' })).diagnostics).toEqual([]);
    expect((await plan('agentgw_agent', { name: 'bot', tenant_id: 'later', policy_id: 'later-policy' })).diagnostics).toEqual([]);
  });

  it('still reports admin API refusals at apply as diagnostics', async () => {
    const planned = dv('agentgw_agent', { name: 'orphan', tenant_id: 'gone-tenant', id: UNKNOWN, key_prefix: UNKNOWN, api_key: UNKNOWN });
    const applied = await plugin.provider.ApplyResourceChange({ type_name: 'agentgw_agent', prior_state: NULL, planned_state: planned, config: planned });
    expect(applied.diagnostics[0]).toMatchObject({ severity: 'ERROR', summary: 'Creating agentgw_agent failed' });
    expect(applied.diagnostics[0].detail).toContain('tenant_not_found');
    expect(decoded(applied.new_state)).toBeNull();
  });

  it('carries new contract fields with no code of their own: tenant budgets, and suspension left alone while unset', async () => {
    const tenant = await planApply('agentgw_tenant', null, { id: 'budgeted', name: 'Budgeted', monthly_budget: 40, daily_budget: 2 });
    expect(tenant.applied.diagnostics).toEqual([]);
    expect(await (await admin('/tenants/budgeted')).json()).toMatchObject({ monthly_budget: 40, daily_budget: 2 });
    const agent = await planApply('agentgw_agent', null, { name: 'worker', tenant_id: 'budgeted' });
    expect(agent.applied.diagnostics).toEqual([]);
    expect(agent.state!.suspended).toBeNull();
    // an operator suspends it: the configuration leaves suspended unset, so this is no drift and no update lifts it
    await admin(`/agents/${String(agent.state!.id)}`, { method: 'PATCH', body: JSON.stringify({ suspended: true }) });
    const read = decoded((await plugin.provider.ReadResource({ type_name: 'agentgw_agent', current_state: dv('agentgw_agent', agent.state) })).new_state);
    expect(read).toEqual(agent.state);
    const relabelled = await planApply('agentgw_agent', read, { name: 'worker', tenant_id: 'budgeted', labels: { team: 'ops' } });
    expect(relabelled.applied.diagnostics).toEqual([]);
    expect(await (await admin(`/agents/${String(agent.state!.id)}`)).json()).toMatchObject({ suspended: true, labels: { team: 'ops' } });
    // set in the configuration, it is managed
    const resumed = await planApply('agentgw_agent', relabelled.state, { name: 'worker', tenant_id: 'budgeted', labels: { team: 'ops' }, suspended: false });
    expect(resumed.state!.suspended).toBe(false);
    expect(await (await admin(`/agents/${String(agent.state!.id)}`)).json()).toMatchObject({ suspended: false });
    for (const [type, state] of [['agentgw_agent', resumed.state], ['agentgw_tenant', tenant.state]] as const) {
      expect((await planApply(type, state, null)).applied.diagnostics).toEqual([]);
    }
  });

  it('fails ConfigureProvider on a wrong admin key, so that plan fails rather than apply', async () => {
    const res = await plugin.provider.ConfigureProvider({ terraform_version: '1.11.4', config: providerConfig({ admin_url: gw.adminUrl, admin_key: 'adk_wrongwrongwrongwrongwrongwrong12' }) });
    expect(res.diagnostics).toHaveLength(1);
    expect(res.diagnostics[0]).toMatchObject({ severity: 'ERROR', summary: 'Admin key refused' });
    expect(res.diagnostics[0].detail).toContain('401 invalid_api_key');
    const again = await plugin.provider.ConfigureProvider({ terraform_version: '1.11.4', config: providerConfig({ admin_url: gw.adminUrl, admin_key: gw.adminKey }) });
    expect(again.diagnostics).toEqual([]);
  });

  it('stops and shuts down when terraform is done', async () => {
    expect(await plugin.provider.StopProvider({})).toEqual({ Error: '' });
    const exited = new Promise<number | null>((resolve) => plugin.child.once('exit', resolve));
    await plugin.controller.Shutdown({});
    expect(await exited).toBe(0);
  });
});
