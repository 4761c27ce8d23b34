// Charts of the results page, drawn from the JSON the page embeds (no inline script).
(function () {
  "use strict";
  var palette = ["#c2185b", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#e377c2", "#393b79"];
  var charts = [];

  // Draws the confidence interval of each bar as a whisker.
  var whiskers = {
    id: "whiskers",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      chart.data.datasets.forEach(function (dataset, i) {
        var meta = chart.getDatasetMeta(i);
        if (!dataset.intervals || meta.hidden) { return; }
        meta.data.forEach(function (bar, j) {
          var interval = dataset.intervals[j];
          if (!interval || interval[0] == null) { return; }
          var y = chart.scales.y;
          var top = y.getPixelForValue(interval[1]);
          var bottom = y.getPixelForValue(interval[0]);
          ctx.save();
          ctx.strokeStyle = "#1f2328";
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(bar.x, top); ctx.lineTo(bar.x, bottom);
          ctx.moveTo(bar.x - 4, top); ctx.lineTo(bar.x + 4, top);
          ctx.moveTo(bar.x - 4, bottom); ctx.lineTo(bar.x + 4, bottom);
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };

  function draw() {
    var node = document.getElementById("chart-data");
    if (!node || typeof Chart === "undefined") { return; }
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var data = JSON.parse(node.textContent);
    var radar = document.getElementById("radar");
    if (radar && data.metricKeys.length >= 3) {
      charts.push(new Chart(radar, {
        type: "radar",
        data: {
          labels: data.metrics,
          datasets: data.sources.map(function (source, i) {
            return {
              label: source.label,
              data: data.metricKeys.map(function (key) { return (source.values[key] || {}).mean; }),
              borderColor: palette[i % palette.length],
              backgroundColor: "transparent",
              pointRadius: 2
            };
          })
        },
        options: { scales: { r: { min: 1, max: 5, ticks: { stepSize: 1 } } }, plugins: { legend: { position: "bottom" } } }
      }));
    }
    var bars = document.getElementById("bars");
    if (bars) {
      charts.push(new Chart(bars, {
        type: "bar",
        data: {
          labels: data.sources.map(function (s) { return s.label; }),
          datasets: data.dimensionKeys.map(function (key, i) {
            return {
              label: data.dimensions[i],
              data: data.sources.map(function (s) { return (s.values[key] || {}).mean; }),
              intervals: data.sources.map(function (s) { var v = s.values[key] || {}; return [v.ci_low, v.ci_high]; }),
              backgroundColor: palette[(i + 1) % palette.length]
            };
          })
        },
        options: { scales: { y: { min: 1, max: 5 } }, plugins: { legend: { position: "bottom" }, subtitle: { display: true, text: data.ciLabel } } },
        plugins: [whiskers]
      }));
    }
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", draw);
})();
