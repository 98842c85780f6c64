import type { Page } from 'playwright-core';

/** A bar of the report chart as drawn: its middle and height in CSS pixels, and whether it is hatched. */
export interface DrawnBar {
  x: number;
  y: number;
  height: number;
  /** Striped with white (a bar that cannot be drilled into), not solid. */
  hatched: boolean;
}

/** The bars of the report chart, found by their colour (#0b57d0) in the canvas's pixels, left to right. */
export async function chartBars(page: Page): Promise<DrawnBar[]> {
  return page.locator('.chart canvas').evaluate((el) => {
    const canvas = el as unknown as {
      width: number;
      height: number;
      clientWidth: number;
      getContext(t: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
    };
    const { width, height } = canvas;
    const { data } = canvas.getContext('2d').getImageData(0, 0, width, height);
    const pixel = (x: number, y: number) => {
      const i = (y * width + x) * 4;
      return [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!] as const;
    };
    const isBar = (x: number, y: number) => {
      const [r, g, b, a] = pixel(x, y);
      return a > 200 && Math.abs(r - 11) < 40 && Math.abs(g - 87) < 40 && Math.abs(b - 208) < 40;
    };
    const scale = width / canvas.clientWidth;
    const bars: Array<{ x: number; y: number; height: number; hatched: boolean }> = [];
    let start = -1;
    let top = height;
    let bottom = 0;
    for (let x = 0; x <= width; x++) {
      let any = false;
      for (let y = 0; x < width && y < height; y++) {
        if (isBar(x, y)) {
          any = true;
          top = Math.min(top, y);
          bottom = Math.max(bottom, y);
        }
      }
      if (any && start < 0) start = x;
      if (!any && start >= 0) {
        if (x - start > 2) {
          // Inside its outline, a solid bar is all bar colour; a hatched one is striped with white.
          let inside = 0;
          let coloured = 0;
          for (let bx = start + 4; bx < x - 4; bx++)
            for (let by = top + 4; by < bottom - 4; by++) {
              inside++;
              if (isBar(bx, by)) coloured++;
            }
          bars.push({
            x: (start + x) / 2 / scale,
            y: (top + bottom) / 2 / scale,
            height: (bottom - top) / scale,
            hatched: inside > 0 && coloured / inside < 0.8,
          });
        }
        start = -1;
        top = height;
        bottom = 0;
      }
    }
    return bars;
  });
}
