// The report page's interactive charts. Each figure carries its chart as JSON beside the SVG
// drawing of it; this draws the JSON with Chart.js (inlined before this script): a hover shows
// the point's values, a legend entry hides or shows its series, a drag across the plot zooms
// into that range of x and a double-click goes back. Without Chart.js (or scripts) the SVG stays.
(() => {
  'use strict';
  if (typeof Chart === 'undefined') return;

  // Numbers as the report's tables print them (build_report.cpp's format_number), so that a
  // hovered value reads exactly as its table cell.
  function formatNumber(v) {
    if (!Number.isFinite(v)) return '';
    const a = Math.abs(v);
    if (a >= 1000) return v.toFixed(0);
    if (a >= 100) return v.toFixed(1);
    if (a >= 10) return v.toFixed(2);
    if (a >= 1) return v.toFixed(3);
    if (a >= 1e-3 || a === 0) return v.toFixed(4);
    // printf's %.3g: exponent form below 1e-4, trailing zeros dropped.
    const exp = Math.floor(Math.log10(a));
    let s = exp < -4 ? v.toExponential(2) : v.toPrecision(3);
    let mantissa = s, tail = '';
    const e = s.indexOf('e');
    if (e >= 0) {
      mantissa = s.slice(0, e);
      const n = parseInt(s.slice(e + 1), 10);
      tail = 'e' + (n < 0 ? '-' : '+') + String(Math.abs(n)).padStart(2, '0');
    }
    if (mantissa.includes('.')) mantissa = mantissa.replace(/0+$/, '').replace(/\.$/, '');
    return mantissa + tail;
  }

  // Sizes as the report's tables print them (units.cpp's format_size): 65536 -> 64KiB.
  function formatSize(bytes) {
    const names = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = Math.round(bytes), i = 0;
    while (i < 4 && v >= 1024 && v % 1024 === 0) {
      v /= 1024;
      i++;
    }
    return v + names[i];
  }

  function tickLabel(v) {
    if (Math.abs(v) >= 1e6) return v.toPrecision(3);
    const s = formatNumber(v);
    return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
  }

  // Powers of two across [lo, hi], at most about nine of them (as the SVG's ticks).
  function powerOfTwoTicks(lo, hi) {
    const a = Math.floor(Math.log2(lo)), b = Math.ceil(Math.log2(hi));
    const stride = Math.max(1, Math.floor((b - a + 8) / 9));
    const ticks = [];
    for (let e = a; e <= b; e++) {
      const v = Math.pow(2, e);
      if ((e - a) % stride === 0 && v >= lo * 0.999 && v <= hi * 1.001) ticks.push({value: v});
    }
    return ticks;
  }

  // Min - max of each point's samples as a vertical bar, as the SVG draws them.
  const errorBars = {
    id: 'errorBars',
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx, y = chart.scales.y, logY = y.type === 'logarithmic', area = chart.chartArea;
      ctx.save();
      ctx.beginPath();
      ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
      ctx.clip();  // a bar beyond a zoomed or rounded axis stops at the plot's edge
      chart.data.datasets.forEach((ds, i) => {
        if (!ds.errorBars || !chart.isDatasetVisible(i)) return;
        chart.getDatasetMeta(i).data.forEach((el, j) => {
          const p = ds.data[j];
          if (!(p.high > p.low) || (logY && p.low <= 0)) return;
          const y0 = y.getPixelForValue(p.low), y1 = y.getPixelForValue(p.high);
          ctx.save();
          ctx.strokeStyle = ds.borderColor;
          ctx.globalAlpha = 0.67;
          ctx.lineWidth = 1;
          ctx.beginPath();
          for (const [ax, ay, bx, by] of [[el.x, y0, el.x, y1], [el.x - 3, y0, el.x + 3, y0], [el.x - 3, y1, el.x + 3, y1]]) {
            ctx.moveTo(ax, ay);
            ctx.lineTo(bx, by);
          }
          ctx.stroke();
          ctx.restore();
        });
      });
      ctx.restore();
    },
  };

  // The hovered point in words, in an element of the page (not painted on the canvas), so that
  // it can be read, selected and copied.
  function showTip(context) {
    const chart = context.chart, t = context.tooltip, tip = chart.$tip, d = chart.$report;
    if (t.opacity === 0 || !t.dataPoints || t.dataPoints.length === 0) {
      tip.hidden = true;
      return;
    }
    const point = t.dataPoints[0], raw = point.raw;
    tip.querySelector('.tip-series').textContent = point.dataset.label;
    tip.querySelector('.tip-x').textContent = d.x_label + ': ' + (d.x_bytes ? formatSize(raw.x) : formatNumber(raw.x));
    tip.querySelector('.tip-y').textContent = d.y_label + ': ' + formatNumber(raw.y);
    tip.querySelector('.tip-spread').textContent =
        raw.high > raw.low ? 'min – max: ' + formatNumber(raw.low) + ' – ' + formatNumber(raw.high) : '';
    tip.style.left = Math.min(t.caretX + 12, chart.width - 200) + 'px';
    tip.style.top = Math.max(t.caretY - 20, 0) + 'px';
    tip.hidden = false;
  }

  // Drag across the plot to zoom into that range of x; double-click to see everything again.
  function addZoom(chart, canvas) {
    let from = null;
    canvas.addEventListener('mousedown', e => {
      from = e.offsetX;
    });
    canvas.addEventListener('mouseup', e => {
      if (from === null) return;
      const a = Math.min(from, e.offsetX), b = Math.max(from, e.offsetX);
      from = null;
      if (b - a < 8) return;  // a click (a legend entry's, or none), not a drag
      const x = chart.scales.x;
      chart.options.scales.x.min = x.getValueForPixel(a);
      chart.options.scales.x.max = x.getValueForPixel(b);
      chart.update('none');
    });
    const all = {min: chart.options.scales.x.min, max: chart.options.scales.x.max};
    canvas.addEventListener('dblclick', () => {
      chart.options.scales.x.min = all.min;
      chart.options.scales.x.max = all.max;
      chart.update('none');
    });
  }

  function datasets(d) {
    return d.series.map(s => ({
      label: s.name,
      data: s.points.filter(p => !(d.log_x && p[0] <= 0) && !(d.log_y && p[1] <= 0))
                .map(p => ({x: p[0], y: p[1], low: p[2], high: p[3]})),
      borderColor: s.colour,
      backgroundColor: s.colour,
      borderDash: s.dashed ? [6, 4] : [],
      borderWidth: s.dashed ? 1.6 : 2,
      pointRadius: s.markers ? 3 : 0,
      pointHoverRadius: s.markers ? 5 : 3,
      pointHitRadius: 6,
      showLine: true,
      tension: 0,
      errorBars: s.error_bars,
    }));
  }

  function axis(d, which) {
    const log = which === 'x' ? d.log_x : d.log_y;
    const a = {
      type: log ? 'logarithmic' : 'linear',
      title: {display: true, text: which === 'x' ? d.x_label : d.y_label},
      ticks: {callback: v => (which === 'x' && d.x_bytes ? formatSize(v) : tickLabel(v))},
    };
    if (which === 'y' && log) {
      // 1, 2 and 5 times a power of ten over a few decades, powers of ten alone over more.
      a.ticks.callback = (v, i, ticks) => {
        const decades = Math.log10(ticks[ticks.length - 1].value / ticks[0].value);
        const m = Math.round(v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9)));
        return m === 1 || (decades < 3 && (m === 2 || m === 5)) ? tickLabel(v) : '';
      };
    }
    if (which === 'x') {
      // The measured range, not the library's rounded one (a log axis would start at 1 B).
      const xs = d.series.flatMap(s => s.points.map(p => p[0])).filter(x => !log || x > 0);
      if (xs.length > 0) a.min = Math.min(...xs), a.max = Math.max(...xs);
    }
    if (which === 'x' && log) {
      a.afterBuildTicks = scale => {
        scale.ticks = powerOfTwoTicks(scale.min, scale.max);
      };
      a.ticks.autoSkip = false;
    }
    if (which === 'y' && !log) a.beginAtZero = true;  // bandwidths and ratios read best from zero
    return a;
  }

  function draw(figure, d) {
    const box = document.createElement('div');
    box.className = 'chart-canvas';
    const canvas = document.createElement('canvas');
    const tip = document.createElement('div');
    tip.className = 'chart-tip';
    tip.hidden = true;
    for (const part of ['series', 'x', 'y', 'spread']) {
      const line = document.createElement('div');
      line.className = 'tip-' + part;
      tip.appendChild(line);
    }
    box.append(canvas, tip);
    figure.insertBefore(box, figure.firstChild);
    const chart = new Chart(canvas, {
      type: 'line',
      data: {datasets: datasets(d)},
      plugins: [errorBars],
      options: {
        animation: false,
        aspectRatio: 900 / 420,
        interaction: {mode: 'nearest', intersect: false},
        scales: {x: axis(d, 'x'), y: axis(d, 'y')},
        plugins: {
          title: {display: true, text: d.title},
          subtitle: {display: d.warning !== '', text: d.warning, color: '#b41e1e', font: {weight: 'bold'}},
          legend: {position: 'right'},
          tooltip: {enabled: false, external: showTip},
        },
      },
    });
    chart.$report = d;
    chart.$tip = tip;
    addZoom(chart, canvas);
    figure.classList.add('interactive');
    const hint = document.createElement('span');
    hint.className = 'hint';
    hint.textContent = ' Hover for values; drag across to zoom, double-click to undo; click a legend entry to hide it.';
    const caption = figure.querySelector('figcaption');
    if (caption) caption.appendChild(hint);
  }

  for (const figure of document.querySelectorAll('figure.chart')) {
    const data = figure.querySelector('script.chart-data');
    if (!data) continue;
    try {
      draw(figure, JSON.parse(data.textContent));
    } catch (e) {
      // One chart that cannot be drawn keeps its SVG; the others are still drawn.
      figure.classList.remove('interactive');
      const box = figure.querySelector('.chart-canvas');
      if (box) box.remove();
      console.error('chart ' + figure.dataset.chart + ': ' + e);
    }
  }
})();
