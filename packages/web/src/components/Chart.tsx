import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export type Series = { label: string; color: string; values: number[] };

/**
 * Bars over time (uPlot): one series per kind, drawn side by side in each
 * bucket, as wide as its container (it follows a phone's width too).
 */
export function Chart({ title, times, series, height = 220 }: { title: string; times: number[]; series: Series[]; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const bars = uPlot.paths.bars?.({ size: [0.8, 40], gap: 1 });
    const plot = new uPlot(
      {
        title,
        width: Math.max(240, element.clientWidth),
        height,
        // The legend says each series' total until a bucket is pointed at (uPlot's own shows "--" then).
        series: [
          { value: (_self, time: number | null) => (time === null ? "In all" : new Date(time * 1000).toLocaleString()) },
          ...series.map((one) => {
            const total = one.values.reduce((a, b) => a + b, 0);
            return {
              label: one.label,
              stroke: one.color,
              fill: `${one.color}55`,
              width: 1,
              value: (_self: uPlot, value: number | null, _index: number, bucket: number | null) => String(bucket === null ? total : (value ?? 0)),
              ...(bars ? { paths: bars } : {}),
            };
          }),
        ],
        axes: [{}, { size: 50 }],
        scales: { y: { range: (_self, _min, max) => [0, Math.max(1, max)] } },
      },
      [times, ...series.map((one) => one.values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(240, element.clientWidth), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [title, times, series, height]);
  return <div ref={box} className="chart" role="img" aria-label={`${title}: ${series.map((one) => `${one.label} ${one.values.reduce((a, b) => a + b, 0)}`).join(", ")}`} />;
}
