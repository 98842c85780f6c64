import assert from 'node:assert/strict';
import axe from 'axe-core';
import type { Page } from 'playwright-core';

/** WCAG 2.0 and 2.1, levels A and AA, and axe's best practices: what the archive's pages are held to. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] as const;

/**
 * A rule axe found broken (`violation`), or could not decide and leaves to a person (`review`:
 * a colour over a background it cannot read, an attribute allowed only in some uses), on how
 * many elements, and where (the first few).
 */
export interface Finding {
  result: 'violation' | 'review';
  id: string;
  impact: string;
  help: string;
  count: number;
  targets: string[];
  /** The view (page, language, role) where it was found. */
  page: string;
}

/** Impacts that fail a page: WCAG failures a screen-reader or keyboard user cannot get past. */
export const BLOCKING_IMPACTS: ReadonlySet<string> = new Set(['serious', 'critical']);

/**
 * Runs axe-core on the page as it is now. axe is evaluated, not added as a <script>: the app's
 * Content-Security-Policy allows scripts from 'self' only, and would refuse an inline one.
 */
export async function accessibilityFindings(page: Page, view: string): Promise<Finding[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axe.source);
  return page.evaluate(
    async ({ tags, view }) => {
      const { axe: injected } = globalThis as unknown as { axe: typeof axe };
      const found = await injected.run({
        runOnly: { type: 'tag', values: tags },
        resultTypes: ['violations', 'incomplete'],
      });
      const finding = (result: Finding['result']) => (rule: axe.Result) => ({
        result,
        id: rule.id,
        impact: rule.impact ?? 'unknown',
        help: rule.help,
        count: rule.nodes.length,
        targets: rule.nodes.slice(0, 3).map((n) => n.target.join(' ')),
        page: view,
      });
      return [...found.violations.map(finding('violation')), ...found.incomplete.map(finding('review'))];
    },
    { tags: [...AXE_TAGS], view },
  );
}

/** Violations that fail a page. */
export const blocking = (findings: readonly Finding[]): Finding[] =>
  findings.filter((f) => f.result === 'violation' && BLOCKING_IMPACTS.has(f.impact));

/** The findings as a plain-text table: rule, result, impact, count, page, and an element where it was found. */
export function findingsTable(findings: readonly Finding[]): string {
  if (findings.length === 0) return 'axe-core: nothing found';
  const rows = [
    ['id', 'result', 'impact', 'count', 'page', 'first element'],
    ...findings.map((f) => [f.id, f.result, f.impact, String(f.count), f.page, f.targets[0] ?? '']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')).join('\n');
}

/**
 * What the page's layout gets wrong for reading figures and long values: a column of figures
 * (counts, sizes) whose cells or header are not right-aligned, and a page wider than the window
 * (a hash or a path that neither wraps nor is cut with its full text kept).
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    interface Box {
      textContent: string | null;
      offsetParent: unknown;
    }
    interface Cell extends Box {
      cellIndex: number;
      tagName: string;
    }
    const w = globalThis as unknown as {
      document: {
        querySelectorAll(s: string): ArrayLike<{ rows: ArrayLike<{ cells: ArrayLike<Cell> }>; className: string }>;
        documentElement: { scrollWidth: number; clientWidth: number };
      };
      getComputedStyle(e: unknown): { textAlign: string };
    };
    const problems: string[] = [];
    // Counts and sizes (1,000 · 12.5 KB), not addresses (127.0.0.1) or dates.
    const figure = /^(\d{1,3}(,\d{3})+|\d+)(\.\d+)?(\s?[KMGT]?B)?$/;
    // A calendar's days are dates, not figures.
    for (const table of Array.from(w.document.querySelectorAll('table:not(.calendar-days)'))) {
      const rows = Array.from(table.rows);
      const head = rows[0];
      if (!head || rows.length < 2) continue;
      for (const th of Array.from(head.cells)) {
        const cells = rows
          .slice(1)
          .map((r) =>
            Array.from(r.cells).find((c) => c.cellIndex === th.cellIndex && r.cells.length === head.cells.length),
          )
          .filter((c): c is Cell => c !== undefined && (c.textContent ?? '').trim() !== '');
        if (cells.length === 0 || !cells.every((c) => figure.test((c.textContent ?? '').trim()))) continue;
        const left = [th, ...cells].filter((c) => w.getComputedStyle(c).textAlign !== 'right');
        if (left.length > 0)
          problems.push(
            `table.${table.className.replace(/ /g, '.')}: column "${(th.textContent ?? '').trim()}" has figures not right-aligned`,
          );
      }
    }
    const { scrollWidth, clientWidth } = w.document.documentElement;
    if (scrollWidth > clientWidth) problems.push(`the page is ${scrollWidth - clientWidth} px wider than the window`);
    return problems;
  });
}

/**
 * Fails the test on what a view must not have: an axe finding that blocks (serious or critical),
 * or a layout problem at the window's size (figures not right-aligned, a page wider than the window).
 */
export async function noBlockingFindings(page: Page, view: string): Promise<void> {
  const findings = blocking(await accessibilityFindings(page, view));
  assert.deepEqual(findings, [], findingsTable(findings));
  assert.deepEqual(await layoutProblems(page), [], view);
}
