// Appended to a copy of the report page by report_browser.sh: once the page has loaded, measures
// what the browser really laid out and drew, and leaves it as JSON in a pre element with id render-check.
// The page's script draws each chart on a canvas in place of its SVG: the SVG (the no-script
// picture, and the one the files beside the page hold) is shown again to be measured.
window.addEventListener('load', () => {
  const out = {charts: [], tables: []};
  for (const f of document.querySelectorAll('figure.chart')) {
    const canvas = f.querySelector('.chart-canvas canvas');
    const drawn = canvas ? canvas.getBoundingClientRect() : {width: 0, height: 0};
    f.classList.remove('interactive');
    const svg = f.querySelector('svg');
    const box = svg.getBoundingClientRect();
    let lines = 0;
    for (const p of svg.querySelectorAll('polyline')) {
      const b = p.getBBox();
      if (b.width > 0 || b.height > 0) lines++;
    }
    const texts = [...svg.querySelectorAll('text')].filter(t => t.getComputedTextLength() > 0).length;
    out.charts.push({id: f.dataset.chart, width: box.width, height: box.height, lines: lines,
                     markers: svg.querySelectorAll('circle').length, texts: texts,
                     canvas: {width: drawn.width, height: drawn.height}});
  }
  for (const t of document.querySelectorAll('table.data')) {
    const box = t.getBoundingClientRect();
    const shown = [...t.tBodies[0].rows].filter(r => r.getBoundingClientRect().height > 0).length;
    out.tables.push({id: t.dataset.table, width: box.width, height: box.height, rows: shown});
  }
  const pre = document.createElement('pre');
  pre.id = 'render-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
