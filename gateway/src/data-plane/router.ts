import { AgentgwError } from '../contract/index.js';
import type { ProviderAdapter } from '../providers/spec.js';

/** `claude-*`: `*` any run of characters, `?` one; everything else literal. */
function globPattern(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
}

/** One place a model name can be served: `provider/model`, in fallback order. */
export interface Target {
  /** `provider/model` */
  id: string;
  provider: ProviderAdapter;
  /** The upstream's model id. */
  model: string;
}

/** Resolves `provider/model` ids and configured aliases into ordered fallback targets. */
export class Router {
  private readonly aliases = new Map<string, Target[]>();
  /** Alias keys with `*` or `?` (`claude-*`), tried in configuration order when no exact alias or provider/model matches. */
  private readonly globs: Array<{ pattern: RegExp; targets: Target[] }> = [];
  private readonly cache = new Map<string, Target[]>();

  constructor(
    private readonly providers: ReadonlyMap<string, ProviderAdapter>,
    aliases: Record<string, string[]>,
  ) {
    for (const [alias, ids] of Object.entries(aliases)) {
      this.aliases.set(
        alias,
        ids.map((id) => {
          const t = this.direct(id);
          if (!t) throw new Error(`models.${alias}: target ${id} names no configured provider (providers: ${[...providers.keys()].join(', ')})`);
          return t;
        }),
      );
      if (/[*?]/.test(alias)) this.globs.push({ pattern: globPattern(alias), targets: this.aliases.get(alias)! });
    }
  }

  private direct(id: string): Target | undefined {
    const slash = id.indexOf('/');
    if (slash <= 0 || slash === id.length - 1) return undefined;
    const provider = this.providers.get(id.slice(0, slash));
    return provider ? { id, provider, model: id.slice(slash + 1) } : undefined;
  }

  resolve(model: string): Target[] {
    const hit = this.cache.get(model) ?? this.aliases.get(model);
    if (hit) return hit;
    const t = this.direct(model);
    const glob = t ? undefined : this.globs.find((g) => g.pattern.test(model));
    if (glob) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(model, glob.targets);
      return glob.targets;
    }
    if (!t) {
      const names = [...this.providers.keys()].join(', ');
      const aliases = [...this.aliases.keys()];
      throw new AgentgwError(
        'unknown_model',
        `Model ${model} is not known: use "provider/model" with a configured provider (${names})${aliases.length ? ` or an alias (${aliases.join(', ')})` : ''}.`,
        { param: 'model' },
      );
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(model, [t]);
    return [t];
  }

  /** Every advertised model id and alias, for GET /v1/models. */
  listModels(): Array<{ id: string; owned_by: string }> {
    const out: Array<{ id: string; owned_by: string }> = [];
    for (const [alias, targets] of this.aliases) if (!/[*?]/.test(alias)) out.push({ id: alias, owned_by: targets[0]?.provider.name ?? 'agentgw' });
    for (const [name, p] of this.providers) for (const m of p.models) out.push({ id: `${name}/${m}`, owned_by: name });
    return out;
  }
}
