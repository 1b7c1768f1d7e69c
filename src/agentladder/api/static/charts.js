// agentladder dashboard: the agent page's charts, drawn with the vendored uPlot.
// Each .chart[data-source] reads [xs, ys] (the latency chart: [xs, answered, failed]) from
// the JSON script it names. Both y axes start
// at 0; a single point gets a padded x range instead of uPlot's years-wide default.
// Times read as the tables write them, UTC: "2026-12-07 02:53:49 UTC" in the legend, the
// same digits on the axes (the date over the time). The skill chart's x axis is the order
// of the updates, each as wide as the next, its ticks giving their times: imported history
// from months ago and today's evidence both get room (docs/dashboard.md, "Skill over time").
(function () {
  "use strict";
  const HEIGHT = 240;
  const KINDS = {
    xp: { time: true, x: "time (UTC)", y: "XP (cumulative)", stroke: "#2563eb",
      fill: "rgba(37, 99, 235, 0.12)", stepped: true, pad: 60 },
    latency: { time: false, x: "submission", y: "latency ms", stroke: "#d97706",
      fill: "rgba(217, 119, 6, 0.10)", stepped: false, pad: 1 },
  };
  const width = (box) => Math.max(box.clientWidth, 280);
  // Times are UTC everywhere on the dashboard, charts included, and say so.
  const utc = (seconds) => uPlot.tzDate(new Date(seconds * 1e3), "Etc/UTC");
  const stamp = (seconds) => new Date(seconds * 1e3).toISOString().slice(0, 19).replace("T", " ") + " UTC";
  const timeValue = (u, v) => (v === null || v === undefined ? "—" : stamp(v));
  // An axis tick: the stamp's date over its time, the axis label saying UTC.
  const tick = (seconds) => stamp(seconds).slice(0, 19).replace(" ", "\n");
  const TIME_AXIS = { space: 90, size: 62, values: (u, splits) => splits.map(tick) };
  // Ticks at whole updates only, at these steps.
  const ORDER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

  const PALETTE = ["#111827", "#2563eb", "#15803d", "#d97706", "#7c3aed", "#db2777"];

  // The skill chart: {"labels": [...], "data": [times, series...]}, one line per scope,
  // drawn against the updates' order (x = 0, 1, 2 ...), their times on the ticks.
  function drawSkill(box, packed) {
    const times = packed.data[0];
    if (!times.length) {
      box.classList.add("empty");
      box.textContent = "No evidence yet.";
      return null;
    }
    const at = (v) => times[Math.round(v)];
    const series = [{ label: "time (UTC)",
      value: (u, v) => (v === null || v === undefined || at(v) === undefined ? "—" : stamp(at(v))) }]
      .concat(packed.labels.map((label, i) => ({
        label: label, stroke: PALETTE[i % PALETTE.length], width: i ? 1.5 : 2.5,
        spanGaps: true, points: { show: true, size: 4 } })));
    const options = {
      width: width(box), height: HEIGHT,
      scales: { x: { time: false, range: (u, min, max) => [min - 0.5, max + 0.5] },
        y: { range: [0, 10] } },
      series: series,
      axes: [{ label: "updates in order (times UTC)", space: 90, size: 62, incrs: ORDER_STEPS,
        values: (u, splits) => splits.map((v) => (at(v) === undefined ? "" : tick(at(v)))) },
        { label: "skill (0-10)", size: 60 }],
    };
    const order = times.map((_, i) => i);
    return new uPlot(options, [order].concat(packed.data.slice(1)), box);
  }

  function draw(box) {
    const data = JSON.parse(document.getElementById(box.dataset.source).textContent);
    if (box.dataset.kind === "skill") return drawSkill(box, data);
    const kind = KINDS[box.dataset.kind];
    if (!data[0].length) {
      box.classList.add("empty");
      box.textContent = "No data yet.";
      return null;
    }
    const series = { label: kind.y, stroke: kind.stroke, fill: kind.fill, width: 2,
      points: { show: true, size: 5 } };
    if (kind.stepped) series.paths = uPlot.paths.stepped({ align: 1 });
    const all = [kind.time ? { label: kind.x, value: timeValue } : { label: kind.x }, series];
    // a third array: the calls that failed, as points apart (their latency is how long
    // they took to fail, not how fast the agent answers)
    if (data.length > 2) {
      series.label = "latency ms (answered)";
      series.spanGaps = true;
      all.push({ label: "latency ms (failed)", stroke: "#dc2626", width: 0, paths: () => null,
        points: { show: true, size: 7, stroke: "#dc2626", fill: "#fecaca" } });
    }
    const options = {
      width: width(box), height: HEIGHT, tzDate: utc,
      scales: {
        x: { time: kind.time, range: (u, min, max) => (min < max ? [min, max] : [min - kind.pad, max + kind.pad]) },
        y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      series: all,
      axes: [kind.time ? Object.assign({ label: kind.x }, TIME_AXIS) : { label: kind.x },
        { label: kind.y, size: 60 }],
    };
    return new uPlot(options, data, box);
  }

  const drawn = [];
  document.querySelectorAll(".chart[data-source]").forEach((box) => {
    const chart = draw(box);
    if (chart) {
      drawn.push([chart, box]);
      box.uplot = chart; // for the browser tests: the axes' ticks are drawn, not in the DOM
    }
  });
  window.addEventListener("resize", () => {
    drawn.forEach(([chart, box]) => chart.setSize({ width: width(box), height: HEIGHT }));
  });
})();
