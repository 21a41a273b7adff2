// A gateway in front of one upstream per way a dialect is served (OpenAI chat, Anthropic, an OpenAI-compatible server
// without a Responses API, an OpenAI Responses API), with the shared dialect table over them.
import { adminClient } from './admin.js';
import { type Dialect, dialects } from './dialects.js';
import { type FakeOpenAI, startFakeOpenAI } from './fake-openai.js';
import { type TestGateway, startTestGateway } from './gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply } from './scripted-anthropic.js';
import { type ResponsesScript, type ScriptedResponses, startScriptedResponses, textResponse } from './scripted-responses.js';

export const OPENAI_MODEL = 'openai/gpt-4o-mini';
export const ANTHROPIC_MODEL = 'anthropic/claude-sonnet-4-5';
/** The OpenAI-format upstream again, behind a provider without a Responses API: Responses requests are translated. */
export const CHAT_ONLY_MODEL = 'compat/gpt-4o-mini';
/** A Responses upstream behind an `openai` provider: Responses requests go native. */
export const RESPONSES_MODEL = 'oairesp/gpt-4.1';
export const DIALECT_MODELS = [OPENAI_MODEL, ANTHROPIC_MODEL, CHAT_ONLY_MODEL, RESPONSES_MODEL] as const;

export interface DialectGateway {
  gw: TestGateway;
  openai: FakeOpenAI;
  anthropic: ScriptedAnthropic;
  responsesUpstream: ScriptedResponses;
  admin: ReturnType<typeof adminClient>;
  /** The shared dialect table over these upstreams. */
  table: Dialect[];
  /** The route of the table by its name ("chat completions", "messages native", ...). */
  route(name: string): Dialect;
  close(): Promise<void>;
}

/** Starts the upstreams and the gateway; `prices` (USD per million tokens) applies to every model of the table. */
export async function startDialectGateway(opts: { prices?: { input: number; output: number }; responses?: ResponsesScript } = {}): Promise<DialectGateway> {
  const openai = await startFakeOpenAI();
  const anthropic = await startScriptedAnthropic(() => textReply('fine, thanks'));
  const responsesUpstream = await startScriptedResponses(opts.responses ?? (() => textResponse('fine, thanks')));
  const gw = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: `${openai.url}/v1`, api_key: 'sk-upstream' },
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream' },
        compat: { type: 'openai-compatible', base_url: `${openai.url}/v1`, api_key: 'sk-compat-upstream' },
        oairesp: { type: 'openai', base_url: responsesUpstream.url, api_key: 'sk-responses-upstream' },
      },
      ...(opts.prices ? { prices: Object.fromEntries(DIALECT_MODELS.map((m) => [m, opts.prices])) } : {}),
    },
  });
  const table = dialects({
    openai,
    anthropic,
    openaiModel: OPENAI_MODEL,
    anthropicModel: ANTHROPIC_MODEL,
    chatOnlyModel: CHAT_ONLY_MODEL,
    responses: responsesUpstream,
    responsesModel: RESPONSES_MODEL,
  });
  return {
    gw,
    openai,
    anthropic,
    responsesUpstream,
    admin: adminClient(gw.adminUrl, gw.adminKey),
    table,
    route(name) {
      const d = table.find((x) => x.name === name);
      if (!d) throw new Error(`no route ${name}`);
      return d;
    },
    async close() {
      await gw.close();
      await openai.close();
      await anthropic.close();
      await responsesUpstream.close();
    },
  };
}
