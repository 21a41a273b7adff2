import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, TerraformOutput, TerraformStack } from 'cdktf';
import type { Construct } from 'constructs';
import { Agent, AgentgwProvider, Policy, Tenant } from '@agentgw/cdktf';

/** One tenant, two policies, three agents: the declarative example of CONTRACT, written as a CDKTF stack. */
export class SupportStack extends TerraformStack {
  public constructor(scope: Construct, id: string) {
    super(scope, id);

    // The admin URL and key come from AGENTGW_ADMIN_URL and AGENTGW_ADMIN_KEY, so no secret lives in code.
    new AgentgwProvider(this, 'agentgw');

    const initech = new Tenant(this, 'initech', { id: 'initech', name: 'Initech', labels: { team: 'support' } });

    const standard = new Policy(this, 'support_standard', {
      id: 'initech-support',
      tenantId: initech.id,
      monthlyBudget: 250,
      // mock/*: the offline mock that `npm start` serves without providers (as in examples/policies.yaml); not in production
      allowedModels: ['openai/gpt-4o-mini', 'anthropic/claude-*', 'mock/mock-1'],
      rules: { pii: 'block', retryBlock: { maxRepeats: 3, windowSeconds: 300 }, maxCostPerRequest: 0.5 },
    });

    const research = new Policy(this, 'research_capped', {
      id: 'initech-research',
      tenantId: initech.id,
      monthlyBudget: 50,
      dailyBudget: 5,
      allowedModels: ['openai/*', 'mock/*'],
      rules: { pii: 'redact', piiTypes: ['email', 'phone'], rpm: 60, maxCostPerTrace: 2 },
    });

    const bot = new Agent(this, 'support_bot', { name: 'support-bot', tenantId: initech.id, policyId: standard.id });
    new Agent(this, 'support_triage', { name: 'support-triage', tenantId: initech.id, policyId: standard.id });
    new Agent(this, 'research_assistant', {
      name: 'research-assistant',
      tenantId: initech.id,
      policyId: research.id,
      labels: { owner: 'research' },
    });

    // Known after a terraform apply; `agentgw apply` prints new keys itself.
    new TerraformOutput(this, 'support_bot_key', { value: bot.apiKey, sensitive: true });
  }
}

/** Builds the app; `outdir` defaults to cdktf.out next to cdktf.json. */
export function buildApp(outdir?: string): App {
  const app = new App(outdir ? { outdir } : {});
  new SupportStack(app, 'support');
  return app;
}

/** Synthesizes the app and says what it wrote: one line per stack, its file and the agentgw objects in it. */
export function synthesize(outdir?: string): string[] {
  const app = buildApp(outdir);
  app.synth();
  const manifest = JSON.parse(readFileSync(join(app.outdir, 'manifest.json'), 'utf8')) as {
    stacks: Record<string, { name: string; synthesizedStackPath: string; workingDirectory: string }>;
  };
  return Object.values(manifest.stacks).map((stack) => {
    const file = join(app.outdir, stack.synthesizedStackPath);
    const resources = (JSON.parse(readFileSync(file, 'utf8')) as { resource?: Record<string, Record<string, unknown>> }).resource ?? {};
    const count = (type: string, one: string, many: string) => {
      const n = Object.keys(resources[type] ?? {}).length;
      return `${n} ${n === 1 ? one : many}`;
    };
    const dir = relative(process.cwd(), join(app.outdir, stack.workingDirectory)) || '.';
    return (
      `Wrote ${relative(process.cwd(), file)}: stack ${stack.name}, ` +
      `${count('agentgw_tenant', 'tenant', 'tenants')}, ${count('agentgw_policy', 'policy', 'policies')}, ${count('agentgw_agent', 'agent', 'agents')}. ` +
      `Deploy it with: npx agentgw apply --cdktf ${dir}`
    );
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) for (const line of synthesize()) console.log(line);
