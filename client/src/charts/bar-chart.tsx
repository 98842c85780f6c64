import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';

// Only what a bar chart needs: Chart.js tree-shakes the rest away.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);
// The page's own fonts, so Chinese unit names render like the rest of the page.
Chart.defaults.font.family = getComputedStyle(document.documentElement).fontFamily || Chart.defaults.font.family;

export interface BarChartProps {
  labels: string[];
  values: number[];
  /** What the bars measure (the tooltip's heading). */
  measure: string;
  /** The chart in words, for screen readers (the table below has the data). */
  summary: string;
  /** An axis tick's text. */
  tick: (value: number) => string;
  /** A bar's value as its tooltip says it. */
  describe: (index: number) => string;
  /** A bar was clicked. */
  onSelect?: (index: number) => void;
  /** Bars that cannot be selected: hatched and outlined, not only another colour. */
  inert?: (index: number) => boolean;
  /** What each kind of bar means, said below the chart where the kinds differ. */
  legend?: { selectable: string; inert: string };
}

const BAR = '#0b57d0';

/**
 * Diagonal stripes of the bar colour on white: a bar that cannot be selected differs in its
 * texture as well as in colour (and is outlined, so it stands out from the white at 3:1 or more).
 */
function hatch(): CanvasPattern | string {
  const tile = document.createElement('canvas');
  tile.width = tile.height = 8;
  const g = tile.getContext('2d');
  if (!g) return BAR;
  g.fillStyle = '#fff';
  g.fillRect(0, 0, 8, 8);
  g.strokeStyle = BAR;
  g.lineWidth = 2;
  g.beginPath();
  // Three strokes, so the stripes join across tiles.
  for (const offset of [-8, 0, 8]) {
    g.moveTo(offset, 8);
    g.lineTo(offset + 8, 0);
  }
  g.stroke();
  return g.createPattern(tile, 'repeat') ?? BAR;
}

/** A bar chart on a canvas (no inline scripts or styles beyond the canvas's own size, so the page's CSP holds). */
export function BarChart({ labels, values, measure, summary, tick, describe, onSelect, inert, legend }: BarChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'bar'> | null>(null);
  const hatched = useRef<CanvasPattern | string | null>(null);
  // The latest callbacks, for the chart's own handlers.
  const props = useRef({ tick, describe, onSelect, inert });
  props.current = { tick, describe, onSelect, inert };

  useEffect(() => {
    chart.current = new Chart(canvas.current!, {
      type: 'bar',
      // Two or three units should not be drawn as slabs across the page.
      data: { labels: [], datasets: [{ label: measure, data: [], backgroundColor: [], maxBarThickness: 96 }] },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: { label: (item) => `${item.dataset.label}: ${props.current.describe(item.dataIndex)}` },
          },
        },
        scales: {
          x: { ticks: { autoSkip: true, maxRotation: 45 } },
          y: { beginAtZero: true, grace: '5%', ticks: { callback: (value) => props.current.tick(Number(value)) } },
        },
        onClick: (_event, elements) => {
          const index = elements[0]?.index;
          if (index !== undefined && props.current.onSelect && !props.current.inert?.(index))
            props.current.onSelect(index);
        },
        onHover: (event, elements) => {
          const index = elements[0]?.index;
          const target = event.native?.target as HTMLCanvasElement | undefined;
          if (target)
            target.style.cursor =
              index !== undefined && props.current.onSelect && !props.current.inert?.(index) ? 'pointer' : 'default';
        },
      },
    });
    return () => chart.current?.destroy();
  }, []);

  const inertBars = values.map((_, i) => inert?.(i) ?? false);
  useEffect(() => {
    const c = chart.current!;
    c.data.labels = labels;
    const dataset = c.data.datasets[0]!;
    dataset.label = measure;
    dataset.data = values;
    hatched.current ??= hatch();
    dataset.backgroundColor = inertBars.map((still) => (still ? hatched.current! : BAR));
    dataset.borderColor = BAR;
    dataset.borderWidth = inertBars.map((still) => (still ? 2 : 0));
    c.update();
  }, [labels.join('\u0000'), values.join(','), inertBars.join(','), measure]);

  const kinds = legend && inertBars.some(Boolean) ? new Set(inertBars) : new Set<boolean>();
  return (
    <>
      <div class="chart">
        <canvas ref={canvas} role="img" aria-label={summary} />
      </div>
      {kinds.size > 0 && legend && (
        <ul class="chart-legend">
          {kinds.has(false) && (
            <li>
              <span class="swatch" aria-hidden="true" /> {legend.selectable}
            </li>
          )}
          <li>
            <span class="swatch inert" aria-hidden="true" /> {legend.inert}
          </li>
        </ul>
      )}
    </>
  );
}
