// Charts drawn as SVG elements built in the DOM: nothing inline, nothing from another host.
const SVG = 'http://www.w3.org/2000/svg';

function node(name, attributes = {}, text) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) {
    element.setAttribute(key, String(value));
  }
  if (text !== undefined) {
    element.textContent = text;
  }
  return element;
}

function extent(values) {
  let low = Infinity;
  let high = -Infinity;
  for (const value of values) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  if (low === Infinity) return [0, 1];
  if (low === high) return [low - 1, high + 1];
  return [low, high];
}

/**
 * A line or bar chart of points {x: number|null, label: string, y: number}. A line is drawn over x where every
 * point has one (else over the points' order); bars are one per point in order.
 */
export function chart(points, { kind = 'line', width = 640, height = 240, title = '' } = {}) {
  const pad = { left: 56, right: 12, top: 18, bottom: 28 };
  const svg = node('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title, 'data-kind': kind,
    'data-points': points.length });
  const plotWidth = width - pad.left - pad.right;
  const plotHeight = height - pad.top - pad.bottom;
  const [yLow0, yHigh] = extent(points.map((p) => p.y));
  const yLow = kind === 'bar' ? Math.min(0, yLow0) : yLow0;
  const useX = kind === 'line' && points.every((p) => p.x !== null && p.x !== undefined);
  const [xLow, xHigh] = useX ? extent(points.map((p) => p.x)) : [0, Math.max(1, points.length - 1)];
  const sx = (value) => pad.left + ((value - xLow) / (xHigh - xLow || 1)) * plotWidth;
  const sy = (value) => pad.top + plotHeight - ((value - yLow) / (yHigh - yLow || 1)) * plotHeight;
  svg.append(node('line', { x1: pad.left, y1: pad.top + plotHeight, x2: pad.left + plotWidth, y2: pad.top + plotHeight, class: 'chart-axis' }));
  svg.append(node('line', { x1: pad.left, y1: pad.top, x2: pad.left, y2: pad.top + plotHeight, class: 'chart-axis' }));
  svg.append(node('text', { x: pad.left - 4, y: pad.top + 4, 'text-anchor': 'end', class: 'chart-label' }, short(yHigh)));
  svg.append(node('text', { x: pad.left - 4, y: pad.top + plotHeight, 'text-anchor': 'end', class: 'chart-label' }, short(yLow)));
  if (title) {
    svg.append(node('text', { x: pad.left, y: 12, class: 'chart-label' }, title));
  }
  if (points.length > 0) {
    svg.append(node('text', { x: pad.left, y: height - 8, class: 'chart-label' }, points[0].label));
    svg.append(node('text', { x: pad.left + plotWidth, y: height - 8, 'text-anchor': 'end', class: 'chart-label' }, points[points.length - 1].label));
  }
  if (kind === 'bar') {
    const slot = plotWidth / Math.max(1, points.length);
    points.forEach((p, index) => {
      const top = sy(Math.max(p.y, 0));
      const bottom = sy(Math.min(p.y, 0));
      const bar = node('rect', { x: pad.left + index * slot + slot * 0.1, y: top, width: Math.max(1, slot * 0.8), height: Math.max(1, bottom - top),
        class: 'chart-bar' });
      bar.append(node('title', {}, `${p.label}: ${p.y}`));
      svg.append(bar);
    });
  } else if (points.length > 0) {
    const path = points.map((p, index) => `${index === 0 ? 'M' : 'L'}${sx(useX ? p.x : index).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
    svg.append(node('path', { d: path, class: 'chart-line' }));
  }
  return svg;
}

/** A small line over the last samples of one series, with its latest value in the caption. */
export function sparkline(samples, { label, width = 220, height = 60 } = {}) {
  const figure = document.createElement('figure');
  figure.className = 'spark';
  figure.dataset.series = label;
  figure.dataset.samples = String(samples.length);
  const points = samples.map((s) => ({ x: s.t, y: s.value, label: '' }));
  const svg = node('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label });
  if (points.length > 0) {
    const [low, high] = extent(points.map((p) => p.y));
    const [t0, t1] = extent(points.map((p) => p.x));
    const path = points.map((p, index) => {
      const x = 2 + ((p.x - t0) / (t1 - t0 || 1)) * (width - 4);
      const y = height - 3 - ((p.y - low) / (high - low || 1)) * (height - 6);
      return `${index === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`;
    }).join(' ');
    svg.append(node('path', { d: path, class: 'chart-line' }));
  }
  figure.append(svg);
  const caption = document.createElement('figcaption');
  const last = samples.length ? samples[samples.length - 1].value : null;
  caption.textContent = `${label}: ${last === null ? '-' : short(last)}`;
  figure.append(caption);
  return figure;
}

function short(value) {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${(value / 1e9).toFixed(1)}G`;
  if (abs >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toFixed(1)}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}
