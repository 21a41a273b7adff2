// An agent that talks to agentgw with the official OpenAI SDK: three steps of one workflow, grouped by one trace id.
// Usage: [MODEL=provider/model] node examples/openai-agent.mjs AGENT_KEY [BASE_URL]   (MODEL defaults to mock/mock-1)
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';

const [apiKey, baseURL = 'http://127.0.0.1:8080/v1'] = process.argv.slice(2);
if (!apiKey) {
  console.error('usage: node examples/openai-agent.mjs AGENT_KEY [BASE_URL]');
  process.exit(1);
}
const traceId = randomUUID();
const client = new OpenAI({ apiKey, baseURL, defaultHeaders: { 'X-Agent-Trace-Id': traceId } });
const model = process.env.MODEL ?? 'mock/mock-1';

try {
  const plan = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Plan a three-step trip to Lisbon.' }] });
  console.log('plan:', plan.choices[0].message.content);

  const stream = await client.chat.completions.create({
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Describe step one in two sentences.' }],
  });
  process.stdout.write('step one: ');
  for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
  process.stdout.write('\n');

  const emb = await client.embeddings.create({ model, input: ['Lisbon', 'Porto'] });
  console.log(`embeddings: ${emb.data.length} vectors of ${emb.data[0].embedding.length} dimensions`);
  console.log(`trace: ${traceId} (agentgw traces show ${traceId})`);
} catch (err) {
  // An error answer (403 model_not_allowed, 429 budget_exceeded, ...): its status, agentgw's code and message.
  if (!(err instanceof OpenAI.APIError) || err.status === undefined) throw err;
  console.error(`error: ${err.status} ${err.code ?? err.type}: ${err.error?.message ?? err.message}`);
  process.exitCode = 1;
}
