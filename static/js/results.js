// Charts of the results page, drawn from the JSON the page embeds (no inline script).
(function () {
  "use strict";
  var palette = ["#c2185b", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#e377c2", "#393b79"];
  var charts = [];

  // Draws the confidence interval of each bar as a whisker, across the value axis
  // (vertical bars: up and down; horizontal bars: left and right).
  var whiskers = {
    id: "whiskers",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      var horizontal = chart.options.indexAxis === "y";
      var scale = horizontal ? chart.scales.x : chart.scales.y;
      chart.data.datasets.forEach(function (dataset, i) {
        var meta = chart.getDatasetMeta(i);
        if (!dataset.intervals || meta.hidden) { return; }
        meta.data.forEach(function (bar, j) {
          var interval = dataset.intervals[j];
          if (!interval || interval[0] == null) { return; }
          var low = scale.getPixelForValue(interval[0]);
          var high = scale.getPixelForValue(interval[1]);
          var tick = Math.min(4, (horizontal ? bar.height : bar.width) / 2 || 4);
          ctx.save();
          ctx.strokeStyle = "#1f2328";
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          if (horizontal) {
            ctx.moveTo(low, bar.y); ctx.lineTo(high, bar.y);
            ctx.moveTo(low, bar.y - tick); ctx.lineTo(low, bar.y + tick);
            ctx.moveTo(high, bar.y - tick); ctx.lineTo(high, bar.y + tick);
          } else {
            ctx.moveTo(bar.x, high); ctx.lineTo(bar.x, low);
            ctx.moveTo(bar.x - tick, high); ctx.lineTo(bar.x + tick, high);
            ctx.moveTo(bar.x - tick, low); ctx.lineTo(bar.x + tick, low);
          }
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };

  // The dimension bars run across, one group per source, in a box as tall as the groups
  // need: drawn upright at a fixed aspect ratio they were about 80 px tall on a phone and
  // Chart.js skipped every other source's name to fit them under the bars.
  var BAR_PX = 11, GROUP_GAP_PX = 14, AXES_AND_LEGEND_PX = 110, MIN_HEIGHT_PX = 220;
  function barsHeight(sources, dimensions) {
    return Math.max(MIN_HEIGHT_PX, sources * (dimensions * BAR_PX + GROUP_GAP_PX) + AXES_AND_LEGEND_PX);
  }

  // "Character knowledge" -> ["Character", "knowledge"]: Chart.js draws an array as lines.
  function wrapWords(label) {
    return label.indexOf(" ") > 0 ? label.split(" ") : label;
  }

  function draw() {
    var node = document.getElementById("chart-data");
    if (!node || typeof Chart === "undefined") { return; }
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var data = JSON.parse(node.textContent);
    var narrow = window.matchMedia("(max-width: 600px)").matches;
    var radar = document.getElementById("radar");
    if (radar && data.metricKeys.length >= 3) {
      charts.push(new Chart(radar, {
        type: "radar",
        data: {
          // On a phone a label of two words or more goes on two lines, small: on one line
          // "Character knowledge" and "Experience sharing" ran off the canvas's edges and
          // the labels left the web itself a third of the width.
          labels: narrow ? data.metrics.map(wrapWords) : data.metrics,
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
        options: {
          // Taller than wide on a phone: the legend below (one line per two sources) took
          // the height the web needed.
          aspectRatio: narrow ? 0.75 : 1,
          scales: { r: { min: 1, max: 5, ticks: { stepSize: 1 }, pointLabels: { font: { size: narrow ? 10 : 12 } } } },
          plugins: { legend: { position: "bottom" } }
        }
      }));
    }
    var bars = document.getElementById("bars");
    if (bars) {
      var box = bars.parentNode;
      box.style.height = barsHeight(data.sources.length, data.dimensionKeys.length) + "px";
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
        options: {
          indexAxis: "y",
          maintainAspectRatio: false,
          scales: { x: { min: 1, max: 5, title: { display: true, text: data.axisLabel } }, y: { ticks: { autoSkip: false } } },
          plugins: { legend: { position: "bottom" }, subtitle: { display: true, text: data.ciLabel } }
        },
        plugins: [whiskers]
      }));
    }
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", draw);
})();
