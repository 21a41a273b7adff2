import type { ReactNode } from 'react';
import { ApiError } from '../api/client';
import { share, usd } from '../format';

export function Badge(props: { tone?: 'ok' | 'warn' | 'bad' | 'info' | 'muted'; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${props.tone ?? 'muted'}`} title={props.title}>
      {props.children}
    </span>
  );
}

const STATUS_TONE: Record<string, 'ok' | 'warn' | 'bad' | 'info'> = { ok: 'ok', error: 'bad', blocked: 'warn', running: 'info' };
export const StatusBadge = (props: { status: string }) => <Badge tone={STATUS_TONE[props.status] ?? 'muted'}>{props.status}</Badge>;

export function ErrorNote(props: { error: unknown; what?: string }) {
  if (!props.error) return null;
  const e = props.error as Error;
  const code = e instanceof ApiError ? ` (${e.code})` : '';
  return (
    <p className="error-note" role="alert">
      {props.what ? `${props.what}: ` : ''}
      {e.message}
      {code}
    </p>
  );
}

export const Loading = () => <p className="muted">Loading…</p>;

export function Card(props: { title?: ReactNode; actions?: ReactNode; children: ReactNode; className?: string; testId?: string }) {
  return (
    <section className={`card ${props.className ?? ''}`} data-testid={props.testId}>
      {(props.title || props.actions) && (
        <header className="card-head">
          {props.title && <h2>{props.title}</h2>}
          {props.actions && <div className="card-actions">{props.actions}</div>}
        </header>
      )}
      {props.children}
    </section>
  );
}

/** Spend against a limit: a bar that turns amber past 80 % and red at the limit; "no limit" without one. */
export function Meter(props: { label: string; spent: number; limit: number | null | undefined }) {
  const s = share(props.spent, props.limit);
  const tone = s === null ? 'none' : s >= 1 ? 'bad' : s >= 0.8 ? 'warn' : 'ok';
  return (
    <div className="meter" title={s === null ? undefined : `${Math.round(s * 100)} % of the limit`}>
      <div className="meter-label">
        <span>{props.label}</span>
        <span>
          <strong>{usd(props.spent)}</strong>
          <span className="muted"> / {props.limit === null || props.limit === undefined ? 'no limit' : usd(props.limit)}</span>
        </span>
      </div>
      <div className={`meter-track meter-${tone}`}>
        <div className="meter-fill" style={{ width: `${Math.min(100, (s ?? 0) * 100)}%` }} />
      </div>
    </div>
  );
}
