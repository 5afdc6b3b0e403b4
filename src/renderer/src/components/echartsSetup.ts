/**
 * ECharts with only the parts the lab uses (tree-shaken: `echarts/core`, see notes/stack.md), set up the same
 * way in the page (echartsLib.ts, the fallback) and in the chart worker (chartWorker.ts).
 */
import * as echarts from 'echarts/core';
import { LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, MarkAreaComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([LineChart, ScatterChart, GridComponent, TooltipComponent, TitleComponent, MarkLineComponent, MarkAreaComponent, CanvasRenderer]);

type Canvas2D = CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;

/** A canvas to measure and draw text on: the page's, or an OffscreenCanvas in a worker (no document there). */
function scratchCanvas(): HTMLCanvasElement | OffscreenCanvas | null {
  if (typeof document !== 'undefined') return document.createElement('canvas');
  return typeof OffscreenCanvas === 'function' ? new OffscreenCanvas(1, 1) : null;
}

/**
 * Text measuring as zrender's own (one 2D context, font set only when it changes), except for the CJK character
 * zrender measures once per font to get a line height ('国', zrender/lib/contain/text.js ensureFontMeasureInfo).
 * None of the lab's fonts has that glyph, so each measurement made Chromium search the system for a fallback
 * font: 2–12 ms per font, on the main thread, while the first chart was being drawn. A CJK glyph is one em wide,
 * which is what the font size says. In a worker zrender has no canvas of its own to measure with (it would
 * estimate widths from a table), so it gets an OffscreenCanvas.
 */
function installPlatform(): void {
  const ctx = scratchCanvas()?.getContext('2d') as Canvas2D | null | undefined;
  if (!ctx) return;
  let current = '';
  echarts.setPlatformAPI({
    ...(typeof document === 'undefined' ? { createCanvas: () => new OffscreenCanvas(1, 1) as unknown as HTMLCanvasElement } : {}),
    measureText(text: string, font?: string) {
      const f = font || '12px sans-serif';
      if (text === '国') {
        const px = /(\d+(?:\.\d+)?)px/.exec(f);
        if (px) return { width: Number(px[1]) } as TextMetrics;
      }
      if (f !== current) ctx.font = current = f;
      return ctx.measureText(text);
    },
  });
}
installPlatform();

export { echarts };
