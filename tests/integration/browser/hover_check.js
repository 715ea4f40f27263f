// Appended to a copy of the report page by report_hover.sh after `window.hoverCases = [...]`: for
// each case ({chart, series, x}), moves the mouse (a real mousemove event, as a user's) onto that
// point of that chart and reads back what the page's tooltip shows, as JSON in a pre element with
// id hover-check.
window.addEventListener('load', async () => {
  // Chart.js handles mouse events at the next animation frame: wait frame by frame (headless
  // Chromium under a virtual time budget draws frames only while the page asks for them).
  const frame = () => new Promise(done => {
    requestAnimationFrame(() => done());
    setTimeout(done, 50);
  });
  const frames = async (n, until = () => false) => {
    for (let i = 0; i < n && !until(); i++) await frame();
  };
  const out = {interactive: document.querySelectorAll('figure.chart.interactive').length,
               figures: document.querySelectorAll('figure.chart').length, cases: []};
  for (const c of window.hoverCases) {
    const result = {chart: c.chart};
    out.cases.push(result);
    const figure = document.querySelector(`figure.chart[data-chart="${c.chart}"]`);
    const canvas = figure && figure.querySelector('canvas');
    const chart = canvas && Chart.getChart(canvas);
    if (!chart) {
      result.error = 'chart not drawn interactively';
      continue;
    }
    const i = chart.data.datasets.findIndex(d => d.label === c.series);
    const j = i < 0 ? -1 : chart.data.datasets[i].data.findIndex(p => p.x === c.x);
    if (j < 0) {
      result.error = 'no point ' + c.x + ' in series ' + c.series;
      continue;
    }
    const point = chart.getDatasetMeta(i).data[j];
    figure.scrollIntoView();
    // On the point, or a pixel inside the plot where the point sits on its edge (the smallest
    // size is on the y axis): the browser reports whole pixels, and the chart ignores the axis.
    const box = canvas.getBoundingClientRect(), area = chart.chartArea;
    const x = Math.min(Math.max(point.x, area.left + 1), area.right - 1);
    const y = Math.min(Math.max(point.y, area.top + 1), area.bottom - 1);
    const tip = figure.querySelector('.chart-tip');
    let seen = null;
    canvas.addEventListener('mousemove', e => {
      seen = {offsetX: e.offsetX, offsetY: e.offsetY};
    });
    // A mouse resting on a point keeps reporting it: a move each frame until the tooltip shows.
    for (let i = 0; i < 60 && tip.hidden; i++) {
      canvas.dispatchEvent(new MouseEvent('mousemove', {clientX: box.left + x, clientY: box.top + y, bubbles: true}));
      await frame();
    }
    result.shown = !tip.hidden;
    if (tip.hidden)  // what the chart saw, for the failure message
      result.seen = {event: seen, target: {x, y}, area: chart.chartArea, active: chart.getActiveElements().length};
    for (const part of ['series', 'x', 'y', 'spread']) result[part] = tip.querySelector('.tip-' + part).textContent;
    canvas.dispatchEvent(new MouseEvent('mouseout', {bubbles: true}));
    await frames(60, () => tip.hidden);
  }
  // Drag across the first chart: its x axis shows that range; a double-click shows it all again.
  // A click on a legend entry hides its series.
  const canvas = document.querySelector('figure.chart canvas');
  const chart = canvas && Chart.getChart(canvas);
  if (chart) {
    const box = canvas.getBoundingClientRect(), area = chart.chartArea, x = chart.scales.x;
    const at = (type, px, py, detail = 1) =>
      canvas.dispatchEvent(new MouseEvent(type, {clientX: box.left + px, clientY: box.top + py, bubbles: true, detail}));
    const all = [x.min, x.max], mid = (area.top + area.bottom) / 2;
    const p0 = Math.round(area.left) + 100, p1 = p0 + 200;  // whole pixels, as the browser reports them
    const from = x.getValueForPixel(p0), to = x.getValueForPixel(p1);
    at('mousedown', p0, mid);
    at('mouseup', p1, mid);
    await frames(5);
    out.zoom = {all, wanted: [from, to], zoomed: [chart.scales.x.min, chart.scales.x.max]};
    at('dblclick', area.left + 200, mid, 2);
    await frames(5);
    out.zoom.reset = [chart.scales.x.min, chart.scales.x.max];
    const legend = chart.legend.legendHitBoxes[0];
    for (let i = 0; i < 60 && chart.isDatasetVisible(0); i++) {
      at('click', legend.left + legend.width / 2, legend.top + legend.height / 2);
      await frame();
    }
    out.toggled = {series: chart.data.datasets[0].label, visible: chart.isDatasetVisible(0)};
  }
  const pre = document.createElement('pre');
  pre.id = 'hover-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
