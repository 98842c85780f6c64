import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * A list that renders only the rows in view (and a few around them), so ten thousand files cost
 * what thirty do. Rows have one fixed height; the list scrolls within `maxHeight`.
 */
export function VirtualList({
  count,
  rowHeight,
  maxHeight,
  row,
  class: className,
  label,
}: {
  count: number;
  rowHeight: number;
  maxHeight: number;
  row: (index: number) => ComponentChildren;
  class?: string;
  label?: string;
}) {
  const [scrolled, setScrollTop] = useState(0);
  const height = Math.min(maxHeight, count * rowHeight);
  // The list may have shrunk under a scrolled view (a filter, a folder folded).
  const scrollTop = Math.min(scrolled, Math.max(0, count * rowHeight - height));
  const overscan = 8;
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + maxHeight) / rowHeight) + overscan);
  const shown = [];
  for (let i = first; i < last; i++) shown.push(row(i));
  return (
    <div
      class={`virtual-list ${className ?? ''}`}
      style={{ height: `${height}px` }}
      onScroll={(event) => setScrollTop((event.currentTarget as HTMLElement).scrollTop)}
      // Focusable, so the keyboard scrolls it; a named group, as a bare <div> may not carry a name.
      tabIndex={0}
      role="group"
      aria-label={label}
    >
      <ul style={{ height: `${count * rowHeight}px`, paddingTop: `${first * rowHeight}px` }}>{shown}</ul>
    </div>
  );
}
