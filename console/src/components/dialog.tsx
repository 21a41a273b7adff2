import { type ReactNode, useEffect, useRef } from 'react';

/** A modal <dialog>: Escape and the close button call onClose. */
export function Dialog(props: { title: string; onClose(): void; children: ReactNode; testId?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className="dialog"
      data-testid={props.testId}
      aria-label={props.title}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <header className="dialog-head">
        <h2>{props.title}</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </header>
      {props.children}
    </dialog>
  );
}
