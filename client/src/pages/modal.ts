import { useEffect, useRef } from 'preact/hooks';

/** A `<dialog>` shown modal while its component is mounted (focus kept inside, Escape closes it). */
export function useModal() {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const shown = dialog.current;
    shown?.showModal();
    return () => shown?.close();
  }, []);
  return dialog;
}
