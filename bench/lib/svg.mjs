// Hand-written SVG charts (no dependency): line charts with event markers and reference lines,
// and labelled scatter plots. Linear or log axes, nice ticks, a title, axis labels with units,
// and a legend outside the plot area.

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const FONT = `font-family="Helvetica, Arial, sans-serif"`;

export const COLORS = {
  "smarter-compact": "#d62728",
  compact_context: "#9467bd",
  "opencode-prune": "#2ca02c",
  clear_tool_uses: "#ff7f0e",
  keep: "#1f77b4",
  "keep-1m": "#7f7f7f",
};

function niceStep(span, target) {
  const raw = span / Math.max(1, target);
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

function axis(spec, lo, hi, pxLo, pxHi) {
  const log = !!spec.log;
  let min = spec.min ?? lo;
  let max = spec.max ?? hi;
  if (log) {
    min = spec.min ?? 10 ** Math.floor(Math.log10(Math.max(min, 1e-12)));
    max = spec.max ?? 10 ** Math.ceil(Math.log10(Math.max(max, min * 10)));
  } else {
    if (min === max) max = min + 1;
    const step = niceStep(max - min, spec.ticks ?? 6);
    min = spec.min ?? Math.floor(min / step) * step;
    max = spec.max ?? Math.ceil(max / step) * step;
  }
  const f = log ? (v) => Math.log10(Math.max(v, min)) : (v) => v;
  const scale = (v) => pxLo + ((f(v) - f(min)) / (f(max) - f(min))) * (pxHi - pxLo);
  const ticks = [];
  if (log) {
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
      for (const m of spec.minorLabels === false ? [1] : [1, 2, 5]) {
        const v = m * 10 ** e;
        if (v >= min * 0.999 && v <= max * 1.001) ticks.push(v);
      }
    }
  } else {
    const step = niceStep(max - min, spec.ticks ?? 6);
    for (let v = min; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  }
  return { scale, ticks, min, max, fmt: spec.format ?? ((v) => String(v)) };
}

function frame({ width, height, title, subtitle, m }) {
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>`,
  ];
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(
    `<text x="${m.l}" y="26" font-size="18" font-weight="bold" fill="#111">${esc(title)}</text>`,
  );
  if (subtitle)
    out.push(`<text x="${m.l}" y="46" font-size="12.5" fill="#444">${esc(subtitle)}</text>`);
  return out;
}

function axes(out, X, Y, m, w, h, xLabel, yLabel) {
  const x0 = m.l;
  const y0 = m.t + h;
  for (const t of Y.ticks) {
    const y = Y.scale(t);
    out.push(`<line x1="${x0}" y1="${y}" x2="${x0 + w}" y2="${y}" stroke="#e3e3e3"/>`);
    out.push(
      `<text x="${x0 - 8}" y="${y + 4}" font-size="12" text-anchor="end" fill="#333">${esc(Y.fmt(t))}</text>`,
    );
  }
  for (const t of X.ticks) {
    const x = X.scale(t);
    out.push(`<line x1="${x}" y1="${m.t}" x2="${x}" y2="${y0}" stroke="#f0f0f0"/>`);
    out.push(`<line x1="${x}" y1="${y0}" x2="${x}" y2="${y0 + 5}" stroke="#555"/>`);
    out.push(
      `<text x="${x}" y="${y0 + 19}" font-size="12" text-anchor="middle" fill="#333">${esc(X.fmt(t))}</text>`,
    );
  }
  out.push(`<rect x="${x0}" y="${m.t}" width="${w}" height="${h}" fill="none" stroke="#555"/>`);
  out.push(
    `<text x="${x0 + w / 2}" y="${y0 + 42}" font-size="13.5" text-anchor="middle" fill="#111">${esc(xLabel)}</text>`,
  );
  out.push(
    `<text transform="translate(${x0 - 58},${m.t + h / 2}) rotate(-90)" font-size="13.5" text-anchor="middle" fill="#111">${esc(yLabel)}</text>`,
  );
}

function marker(shape, x, y, color, size = 4.5) {
  if (shape === "x")
    return `<path d="M${x - size},${y - size}L${x + size},${y + size}M${x - size},${y + size}L${x + size},${y - size}" stroke="${color}" stroke-width="2"/>`;
  if (shape === "square")
    return `<rect x="${x - size}" y="${y - size}" width="${2 * size}" height="${2 * size}" fill="${color}" stroke="#fff" stroke-width="1"/>`;
  if (shape === "triangle")
    return `<path d="M${x},${y - size * 1.2}L${x + size * 1.1},${y + size * 0.8}L${x - size * 1.1},${y + size * 0.8}Z" fill="${color}" stroke="#fff" stroke-width="1"/>`;
  if (shape === "diamond")
    return `<path d="M${x},${y - size * 1.3}L${x + size * 1.1},${y}L${x},${y + size * 1.3}L${x - size * 1.1},${y}Z" fill="${color}" stroke="#fff" stroke-width="1"/>`;
  if (shape === "tick")
    return `<line x1="${x}" y1="${y - 9}" x2="${x}" y2="${y + 9}" stroke="${color}" stroke-width="2"/>`;
  return `<circle cx="${x}" cy="${y}" r="${size}" fill="${color}" stroke="#fff" stroke-width="1"/>`;
}

function legend(out, items, x, y) {
  items.forEach((it, i) => {
    const yy = y + i * 21;
    if (it.line !== false)
      out.push(
        `<line x1="${x}" y1="${yy}" x2="${x + 26}" y2="${yy}" stroke="${it.color}" stroke-width="${it.width ?? 2.5}"${it.dash ? ` stroke-dasharray="${it.dash}"` : ""}/>`,
      );
    if (it.marker) out.push(marker(it.marker, x + 13, yy, it.color));
    out.push(
      `<text x="${x + 34}" y="${yy + 4}" font-size="12.5" fill="#111">${esc(it.name)}</text>`,
    );
  });
}

/** A line chart. series: [{name, color, points: [[x, y]], dash, markers: [{x, y, shape}]}];
 * refs: [{y, label, color, dash}]; extraLegend: [{name, color, marker, line:false}]. */
export function lineChart({
  title,
  subtitle,
  width = 960,
  height = 520,
  x,
  y,
  series,
  refs = [],
  extraLegend = [],
  legendWidth = 230,
}) {
  const m = { l: 80, r: legendWidth + 20, t: subtitle ? 62 : 44, b: 58 };
  const w = width - m.l - m.r;
  const h = height - m.t - m.b;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).concat(refs.map((r) => r.y));
  const X = axis(x, Math.min(...xs), Math.max(...xs), m.l, m.l + w);
  const Y = axis(y, y.log ? Math.min(...ys) : Math.min(0, ...ys), Math.max(...ys), m.t + h, m.t);
  const out = frame({ width, height, title, subtitle, m });
  axes(out, X, Y, m, w, h, x.label, y.label);
  out.push(
    `<clipPath id="plot"><rect x="${m.l}" y="${m.t}" width="${w}" height="${h}"/></clipPath><g clip-path="url(#plot)">`,
  );
  for (const r of refs) {
    const yy = Y.scale(r.y);
    out.push(
      `<line x1="${m.l}" y1="${yy}" x2="${m.l + w}" y2="${yy}" stroke="${r.color ?? "#000"}" stroke-width="1.3" stroke-dasharray="${r.dash ?? "6 4"}"/>`,
    );
    out.push(
      `<text x="${m.l + 6}" y="${yy - 5}" font-size="11.5" fill="${r.color ?? "#000"}">${esc(r.label)}</text>`,
    );
  }
  for (const s of [...series].sort((a, b) => (a.z ?? 0) - (b.z ?? 0))) {
    if (s.points.length > 1) {
      const d = s.points
        .map((p, i) => `${i ? "L" : "M"}${X.scale(p[0]).toFixed(1)},${Y.scale(p[1]).toFixed(1)}`)
        .join("");
      out.push(
        `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="${s.width ?? 2}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""} stroke-linejoin="round"/>`,
      );
    }
  }
  out.push(`</g>`);
  // markers are drawn unclipped, so a point on the frame stays whole
  for (const s of series) {
    if (s.dots)
      for (const p of s.points)
        out.push(marker(s.dots, X.scale(p[0]), Y.scale(p[1]), s.color, 3.5));
    for (const mk of s.markers ?? [])
      out.push(marker(mk.shape, X.scale(mk.x), Y.scale(mk.y), mk.color ?? s.color));
  }
  legend(
    out,
    [
      ...series.map((s) => ({ name: s.name, color: s.color, dash: s.dash, marker: s.dots })),
      ...extraLegend,
    ],
    m.l + w + 18,
    m.t + 10,
  );
  out.push(`</svg>`);
  return out.join("\n");
}

/** A scatter plot. groups: [{name, color, points: [{x, y, label, shape}], connect}]; shapes: legend of shapes. */
export function scatterChart({
  title,
  subtitle,
  width = 960,
  height = 540,
  x,
  y,
  groups,
  shapes = [],
  legendWidth = 230,
}) {
  const m = { l: 80, r: legendWidth + 20, t: subtitle ? 62 : 44, b: 58 };
  const w = width - m.l - m.r;
  const h = height - m.t - m.b;
  const pts = groups.flatMap((g) => g.points);
  const X = axis(
    x,
    Math.min(...pts.map((p) => p.x)),
    Math.max(...pts.map((p) => p.x)),
    m.l,
    m.l + w,
  );
  const Y = axis(
    y,
    Math.min(...pts.map((p) => p.y)),
    Math.max(...pts.map((p) => p.y)),
    m.t + h,
    m.t,
  );
  const out = frame({ width, height, title, subtitle, m });
  axes(out, X, Y, m, w, h, x.label, y.label);
  for (const g of groups) {
    if (!g.connect) continue;
    // points sharing a `line` key are joined in order
    for (const key of new Set(g.points.map((p) => p.line))) {
      const ps = g.points.filter((p) => p.line === key);
      if (ps.length < 2) continue;
      const d = ps
        .map((p, i) => `${i ? "L" : "M"}${X.scale(p.x).toFixed(1)},${Y.scale(p.y).toFixed(1)}`)
        .join("");
      out.push(
        `<path d="${d}" fill="none" stroke="${g.color}" stroke-width="1.5" stroke-opacity="0.6"/>`,
      );
    }
  }
  for (const g of groups) {
    for (const p of g.points) {
      const px = X.scale(p.x);
      const py = Y.scale(p.y);
      out.push(marker(p.shape ?? "circle", px, py, g.color, 6));
      if (p.label)
        out.push(
          `<text x="${px + 8}" y="${py - 7}" font-size="10.5" fill="${g.color}">${esc(p.label)}</text>`,
        );
    }
  }
  legend(
    out,
    [
      ...groups.map((g) => ({ name: g.name, color: g.color, marker: "circle", line: false })),
      ...shapes.map((s) => ({ name: s.name, color: "#444", marker: s.shape, line: false })),
    ],
    m.l + w + 18,
    m.t + 10,
  );
  out.push(`</svg>`);
  return out.join("\n");
}
