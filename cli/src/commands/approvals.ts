import { Option, type Command } from 'commander';
import { isAdminApiError } from '../admin-client/errors.js';
import { APPROVAL_STATUSES, type Approval, type ApprovalStatus } from '../admin-client/types.js';
import { CliError } from '../errors.js';
import { act } from '../run-action.js';
import { AgentNames } from '../services/agent-ref.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { followApprovals, type ApprovalEvent } from '../services/follow-approvals.js';
import { stopOnSignals } from '../services/stop-signal.js';
import { approvalLines, outcomeText, type ApprovalTextOptions } from '../ui/approval-text.js';
import { renderDocument } from '../ui/document.js';
import { line, seg, type Line } from '../ui/lines.js';
import { note } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderLines } from '../ui/render-lines.js';
import { parseInteger, parseSeconds } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

interface ListFlags extends Flags {
  status?: ApprovalStatus;
  tenant?: string;
  trace?: string;
  limit?: string;
  cursor?: string;
  follow?: boolean;
  interval?: string;
  maxPolls?: string;
}

const DEFAULT_INTERVAL_SECONDS = 1;
/** Decided approvals in a list show this many lines of their arguments (pending ones all of them: someone decides on them). */
const DECIDED_ARGUMENT_LINES = 12;

/** Columns to fold arguments at: the terminal's, else 100 (pipes and logs). */
const width = () => Math.max(40, process.stdout.columns || 100);

export async function approvalsList(flags: ListFlags): Promise<number> {
  if (flags.follow) return approvalsFollow(flags);
  const limit = parseInteger('--limit', flags.limit, 1, 500);
  const client = connect(flags);
  const page = await client.listApprovals({ status: flags.status, tenant_id: flags.tenant, trace_id: flags.trace, limit, cursor: flags.cursor });
  const mode = outputMode(flags);
  if (mode === 'json') {
    renderDocument(page.data, 'json');
  } else if (page.data.length === 0) {
    process.stdout.write(!flags.status ? 'No approvals yet.\n' : flags.status === 'pending' ? 'No call is waiting for a person.\n' : `No ${flags.status} approvals.\n`);
  } else {
    const names = new AgentNames(client, flags.tenant);
    await names.learn(page.data.map((a) => a.agent_id));
    const opts: ApprovalTextOptions = { agent: (a) => names.label(a.tenant_id, a.agent_id), width: width() };
    const lines = page.data.flatMap((a, i) => [
      ...(i > 0 ? [line()] : []),
      ...approvalLines(a, { ...opts, maxArgumentLines: a.status === 'pending' ? undefined : DECIDED_ARGUMENT_LINES }),
    ]);
    await renderLines(lines, mode);
    const waiting = page.data.filter((a) => a.status === 'pending');
    if (waiting.length > 0) note(`Decide with: agentgw approvals approve ${waiting[0]!.id} (or deny) [--comment TEXT]`);
  }
  if (page.next_cursor) note(`More approvals: agentgw approvals list --cursor ${page.next_cursor} (with the same filters)`);
  return 0;
}

/** Lines for what happened in the queue: a waiting call in full, a decision in a line (with the call when not shown yet). */
function eventLines(e: ApprovalEvent, opts: ApprovalTextOptions, agent: (a: Approval) => string): Line[] {
  const a = e.approval;
  if (e.kind === 'pending') return [line(seg('+ waiting for a decision', 'update')), ...approvalLines(a, opts), line()];
  const tone = a.status === 'approved' ? 'success' : a.status === 'abandoned' ? 'muted' : 'error';
  const head = line(seg(`~ ${a.id} `, tone), seg(outcomeText(a), tone), seg(` (${a.tool}, ${agent(a)}, trace ${a.trace_id})`, 'muted'));
  return e.seenBefore ? [head] : [head, ...approvalLines(a, opts), line()];
}

/** Runs until SIGINT or SIGTERM (exit 0), or for --max-polls polls. */
async function approvalsFollow(flags: ListFlags): Promise<number> {
  if (flags.status || flags.cursor || flags.limit) {
    throw new CliError('--follow watches the pending queue and the decisions made on it: leave out --status, --limit and --cursor');
  }
  const intervalMs = parseSeconds('--interval', flags.interval, DEFAULT_INTERVAL_SECONDS);
  const maxPolls = parseInteger('--max-polls', flags.maxPolls, 1);
  const client = connect(flags);
  const mode = outputMode(flags);
  const names = new AgentNames(client, flags.tenant);
  const agent = (a: Approval) => names.label(a.tenant_id, a.agent_id);
  const stop = stopOnSignals();
  try {
    if (mode !== 'json') note('Watching the approvals queue (Ctrl-C to stop): calls that wait for a person and the decisions made.');
    const events = followApprovals(client, { tenant_id: flags.tenant, trace_id: flags.trace, intervalMs, maxPolls, signal: stop.signal });
    for await (const batch of events) {
      if (mode === 'json') {
        process.stdout.write(batch.map((e) => JSON.stringify({ event: e.kind, approval: e.approval }) + '\n').join(''));
        continue;
      }
      await names.learn(batch.map((e) => e.approval.agent_id));
      const opts: ApprovalTextOptions = { agent, width: width() };
      await renderLines(batch.flatMap((e) => eventLines(e, opts, agent)), mode);
    }
  } finally {
    stop.dispose();
  }
  return 0;
}

/** A refusal to decide, as a sentence that says what happened and what is left to do. */
function decisionError(e: unknown, id: string, verb: 'approve' | 'deny'): unknown {
  if (isAdminApiError(e, 'approval_not_found')) {
    return new CliError(`there is no approval ${id} (or your admin key may not see its tenant): list them with agentgw approvals list (404 approval_not_found)`);
  }
  if (isAdminApiError(e, 'approval_decided')) {
    const said = e.message.replace(/\.\s*$/, '');
    return new CliError(
      `approval ${id} cannot be ${verb === 'approve' ? 'approved' : 'denied'}: it was already decided, and a decision is final (${said}); ` +
        `agentgw approvals list --trace <trace id> shows who decided it (409 approval_decided)`,
    );
  }
  if (isAdminApiError(e, 'insufficient_role') || isAdminApiError(e, 'tenant_forbidden')) {
    const said = e.message.replace(/\.\s*$/, '');
    return new CliError(`your admin key may not decide approval ${id}: an admin key, or a tenant_admin key of its tenant, may (${said}) (${e.status} ${e.code})`);
  }
  return e;
}

async function decide(verb: 'approve' | 'deny', id: string, flags: Flags & { comment?: string }): Promise<number> {
  if (flags.comment !== undefined && flags.comment.trim() === '') throw new CliError('--comment must not be empty: leave it out, or say why');
  const client = connect(flags);
  let decided: Approval;
  try {
    decided = await client.decideApproval(id, verb, flags.comment !== undefined ? { comment: flags.comment } : {});
  } catch (e) {
    throw decisionError(e, id, verb);
  }
  if (flags.json) {
    renderDocument(decided, 'json');
    return 0;
  }
  const names = new AgentNames(client, decided.tenant_id);
  await names.learn([decided.agent_id]);
  const what = `${decided.tool} of ${names.label(decided.tenant_id, decided.agent_id)} (trace ${decided.trace_id})`;
  const timedOut = decided.decided_at !== null && Date.parse(decided.decided_at) >= Date.parse(decided.expires_at);
  const after =
    verb === 'deny'
      ? 'the call is replaced by a refusal that names this approval'
      : timedOut
        ? `it had timed out (the agent got a refusal), so the same call may now pass once in trace ${decided.trace_id} within 15 minutes`
        : 'the held call goes on to the agent as proposed';
  process.stdout.write(`${verb === 'approve' ? 'Approved' : 'Denied'} ${decided.id}: ${what}; ${after}.\n`);
  return 0;
}

export const approvalsApprove = (id: string, flags: Flags & { comment?: string }) => decide('approve', id, flags);
export const approvalsDeny = (id: string, flags: Flags & { comment?: string }) => decide('deny', id, flags);

const LIST_HELP = `
Examples:
  agentgw approvals list --status pending        what waits for a person now
  agentgw approvals list --follow                watch the queue: calls and decisions as they come
  agentgw approvals list --trace run-42 --json   every approval of one trace, as JSON`;

const DECIDE_HELP = (verb: string) => `
Example:
  agentgw approvals ${verb} apr_0123456789abcdef --comment "${verb === 'approve' ? 'checked the deploy plan' : 'not on a Friday'}"`;

export function registerApprovals(program: Command): void {
  const approvals = program
    .command('approvals')
    .description('tool calls held for a person by a tool rule with action approve: list, watch, approve, deny');
  approvals
    .command('list')
    .description('approvals, newest first: the tool, its arguments, the rule that held it, who decided')
    .addOption(new Option('--status <status>', 'only approvals in this status').choices([...APPROVAL_STATUSES]))
    .option('--tenant <id>', 'only this tenant')
    .option('--trace <trace-id>', 'only this trace')
    .option('--limit <n>', 'how many (1-500, default 50)')
    .option('--cursor <cursor>', 'the next page, as printed after a full page')
    .option('-f, --follow', 'watch the queue: print calls as they begin to wait and decisions as they are made, until Ctrl-C')
    .option('--interval <seconds>', 'with --follow: seconds between polls (default 1)')
    .option('--max-polls <n>', 'with --follow: stop after N polls (for scripts)')
    .option('--json', 'print JSON (with --follow: one {event, approval} object per line)')
    .addHelpText('after', LIST_HELP)
    .action(act(approvalsList));
  for (const verb of ['approve', 'deny'] as const) {
    approvals
      .command(`${verb} <approval-id>`)
      .description(
        verb === 'approve'
          ? 'release a held call as proposed (a timed-out one: the same call may pass once in its trace within 15 minutes)'
          : 'refuse a held call: the agent gets a refusal that names the approval',
      )
      .option('--comment <text>', 'why, kept with the decision')
      .option('--json', 'print the decided approval as JSON')
      .addHelpText('after', DECIDE_HELP(verb))
      .action(act(verb === 'approve' ? approvalsApprove : approvalsDeny));
  }
}
