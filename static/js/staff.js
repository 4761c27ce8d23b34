// The study dashboard's throughput chart, drawn from the JSON the page embeds (no inline script).
(function () {
  "use strict";
  var chart = null;

  function draw() {
    var node = document.getElementById("throughput-data");
    var canvas = document.getElementById("throughput");
    if (!node || !canvas || typeof Chart === "undefined") { return; }
    var data = JSON.parse(node.textContent);
    if (chart) { chart.destroy(); }
    chart = new Chart(canvas, {
      type: "bar",
      data: {
        labels: data.labels,
        datasets: [{ label: canvas.dataset.label, data: data.counts, backgroundColor: "#c2185b" }]
      },
      options: {
        maintainAspectRatio: false,
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } }, x: { ticks: { maxRotation: 0, autoSkip: true } } },
        plugins: { legend: { display: false } }
      }
    });
  }

  document.addEventListener("DOMContentLoaded", draw);
})();
