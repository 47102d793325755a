/* Compare page: per-query scatter of two models on every dataset both have results for.
   Per-model data files are loaded by pairs.js with <script> elements, which works from file:// and http. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var data = window.irboardData || {};
  var datasets = data.datasets || {};
  var first = document.getElementById("model-a");
  var second = document.getElementById("model-b");
  var results = document.getElementById("compare-results");
  var status = document.getElementById("compare-status");
  var pairs = window.irboardPairs, mean = pairs.mean;

  function slugOf(select, id) {
    var option = Array.prototype.find.call(select.options, function (o) { return o.value === id; });
    return option ? option.dataset.slug : null;
  }

  function loadModel(id) { return pairs.loadModel("", slugOf(first, id), id); }

  /* Plotly reads <b>, <a>, <br> in text as markup: names and query ids go in as entities it decodes. */
  function plain(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function block(datasetId, info, a, b, nameA, nameB) {
    var section = document.createElement("section");
    section.className = "compare-block";
    var heading = document.createElement("h2");
    var link = document.createElement("a");
    link.href = "datasets/" + info.slug + ".html";
    link.textContent = datasetId;
    heading.appendChild(link);
    section.appendChild(heading);
    var wins = 0, ties = 0, losses = 0;
    a.values.forEach(function (value, i) {
      var d = b.values[i] - value;
      if (d > 1e-9) { wins += 1; } else if (d < -1e-9) { losses += 1; } else { ties += 1; }
    });
    var p = a.p[info.models.indexOf(nameB)];
    var summary = document.createElement("p");
    summary.textContent = info.metric + " ×100: " + nameA + " " + (100 * mean(a.values)).toFixed(2) + ", " +
      nameB + " " + (100 * mean(b.values)).toFixed(2) + ". " + nameB + " wins " + wins + ", ties " + ties +
      ", loses " + losses + " of " + a.values.length + " queries (values rounded to 4 decimals). Corrected p = " +
      pairs.formatP(p, info.alpha) + ". " + pairs.effectText(a.values, b.values, info, nameB, nameA, p);
    section.appendChild(summary);
    var plot = document.createElement("div");
    plot.className = "plot";
    section.appendChild(plot);
    results.appendChild(section);
    var x = a.values.map(function (value) { return 100 * value; });
    var y = b.values.map(function (value) { return 100 * value; });
    var top = Math.max(100, Math.max.apply(null, x.concat(y)));
    window.irboardPlot(plot, [{
      type: "scatter", mode: "markers", x: x, y: y, text: info.queries.map(plain),
      marker: { color: "#1f5fa8", opacity: 0.6, size: 6 },
      hovertemplate: "query %{text}<br>x %{x:.2f}<br>y %{y:.2f}<extra></extra>"
    }], {
      height: 380, margin: { l: 60, r: 20, t: 20, b: 50 },
      xaxis: { title: { text: plain(nameA + " (" + info.metric + " ×100)") }, range: [-3, top + 3], gridcolor: "#eaeef2" },
      yaxis: { title: { text: plain(nameB) }, range: [-3, top + 3], gridcolor: "#eaeef2" },
      shapes: [{ type: "line", x0: 0, y0: 0, x1: top, y1: top, line: { color: "#8c959f", dash: "dot" } }],
      font: { family: "system-ui, sans-serif", size: 12, color: "#1f2328" }
    });
  }

  function update() {
    var nameA = first.value, nameB = second.value;
    var params = new URLSearchParams({ a: nameA, b: nameB });
    try { window.history.replaceState(null, "", window.location.pathname + "?" + params.toString()); } catch (e) { /* file:// */ }
    status.textContent = "Loading…";
    Promise.all([loadModel(nameA), loadModel(nameB)]).then(function (pair) {
      results.textContent = "";
      var shown = 0;
      Object.keys(datasets).forEach(function (datasetId) {
        if (pair[0][datasetId] && pair[1][datasetId]) {
          block(datasetId, datasets[datasetId], pair[0][datasetId], pair[1][datasetId], nameA, nameB);
          shown += 1;
        }
      });
      status.textContent = shown ? shown + " datasets with results for both models." :
        "These two models have no dataset in common.";
    }, function (error) { status.textContent = error.message; });
  }

  var params = new URLSearchParams(window.location.search);
  if (params.get("a") && slugOf(first, params.get("a"))) { first.value = params.get("a"); }
  if (params.get("b") && slugOf(second, params.get("b"))) { second.value = params.get("b"); }
  first.addEventListener("change", update);
  second.addEventListener("change", update);
  if (window.Plotly && first.value) { update(); }
})();
