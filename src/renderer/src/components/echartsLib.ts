/** ECharts with only the parts the lab uses (tree-shaken: `echarts/core`, see notes/stack.md). Loaded through
 * `loadEcharts()` (echarts.ts) as its own chunk. */
import * as echarts from 'echarts/core';
import { LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, MarkAreaComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([LineChart, ScatterChart, GridComponent, TooltipComponent, TitleComponent, MarkLineComponent, MarkAreaComponent, CanvasRenderer]);

export { echarts };
