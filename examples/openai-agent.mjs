// An agent that talks to agentgw in the OpenAI API (what the OpenAI SDK sends, here with plain fetch so it needs nothing
// installed): three steps of one workflow, grouped by one trace id.
// Usage: [MODEL=provider/model] node examples/openai-agent.mjs AGENT_KEY [BASE_URL]   (MODEL defaults to mock/mock-1)
import { randomUUID } from 'node:crypto';

const [apiKey, baseURL = 'http://127.0.0.1:8080/v1'] = process.argv.slice(2);
if (!apiKey) {
  console.error('usage: node examples/openai-agent.mjs AGENT_KEY [BASE_URL]');
  process.exit(1);
}
const traceId = randomUUID();
const model = process.env.MODEL ?? 'mock/mock-1';

/** An error answer of the gateway (403 model_not_allowed, 429 budget_exceeded, ...): its status, code and message. */
class ApiError extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(`${status} ${error.code ?? error.type}: ${error.message ?? 'no message'}`);
    this.status = status;
  }
}

/** POST /v1/PATH with the agent's key and the trace id; the response once it is a 2xx. */
async function post(path, body) {
  const res = await fetch(`${baseURL}/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-agent-trace-id': traceId },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
  return res;
}

/** The `data:` payloads of a server-sent event stream, parsed, up to `[DONE]`. */
async function* events(res) {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end).replace(/\r$/, '');
      buffered = buffered.slice(end + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return;
      yield JSON.parse(data);
    }
  }
}

try {
  const plan = await (await post('chat/completions', { model, messages: [{ role: 'user', content: 'Plan a three-step trip to Lisbon.' }] })).json();
  console.log('plan:', plan.choices[0].message.content);

  const stream = await post('chat/completions', {
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Describe step one in two sentences.' }],
  });
  process.stdout.write('step one: ');
  for await (const chunk of events(stream)) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
  process.stdout.write('\n');

  const emb = await (await post('embeddings', { model, input: ['Lisbon', 'Porto'] })).json();
  console.log(`embeddings: ${emb.data.length} vectors of ${emb.data[0].embedding.length} dimensions`);
  console.log(`trace: ${traceId} (agentgw traces show ${traceId})`);
} catch (err) {
  if (!(err instanceof ApiError)) throw err;
  console.error(`error: ${err.message}`);
  process.exitCode = 1;
}
