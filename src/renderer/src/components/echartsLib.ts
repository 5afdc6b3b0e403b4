/** ECharts with only the parts the lab uses (tree-shaken: `echarts/core`, see notes/stack.md). Loaded through
 * `loadEcharts()` (echarts.ts) as its own chunk. */
import * as echarts from 'echarts/core';
import { LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, MarkAreaComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([LineChart, ScatterChart, GridComponent, TooltipComponent, TitleComponent, MarkLineComponent, MarkAreaComponent, CanvasRenderer]);

/**
 * Text measuring as zrender's own (one 2D context, font set only when it changes), except for the CJK character
 * zrender measures once per font to get a line height ('国', zrender/lib/contain/text.js ensureFontMeasureInfo).
 * None of the lab's fonts has that glyph, so each measurement made Chromium search the system for a fallback
 * font: 2–12 ms per font, on the main thread, while the first chart was being drawn. A CJK glyph is one em wide,
 * which is what the font size says.
 */
function installMeasureText(): void {
  const ctx = typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
  if (!ctx) return;
  let current = '';
  echarts.setPlatformAPI({
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
installMeasureText();

export { echarts };
