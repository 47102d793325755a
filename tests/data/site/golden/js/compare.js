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

  /* One dataset: the pair's summary and, when opened, its per-query scatter (only the first is open: thirty
     scatter plots would block the page). */
  function block(datasetId, info, a, b, nameA, nameB, open) {
    var section = document.createElement("details");
    section.className = "compare-block";
    section.open = open;
    var heading = document.createElement("summary");  /* plain text: a link inside a summary is not reachable */
    heading.textContent = datasetId;
    section.appendChild(heading);
    var more = document.createElement("p"), link = document.createElement("a");
    link.href = "datasets/" + info.slug + ".html";
    link.textContent = "the dataset page of " + datasetId;
    more.appendChild(document.createTextNode("Every model on this dataset: "));
    more.appendChild(link);
    more.appendChild(document.createTextNode("."));
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
    section.appendChild(more);
    var plot = document.createElement("div");
    plot.className = "plot";
    section.appendChild(plot);
    results.appendChild(section);
    function draw() { if (section.open && !plot.dataset.drawn) { plot.dataset.drawn = "1"; scatter(plot, info, a, b, nameA, nameB); } }
    section.addEventListener("toggle", draw);
    draw();
  }

  function scatter(plot, info, a, b, nameA, nameB) {
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

  function cell(row, text, header) {
    var element = document.createElement(header ? "th" : "td");
    if (header) { element.scope = "row"; } else { element.className = "num"; }
    element.textContent = text;
    row.appendChild(element);
    return element;
  }

  /* Across datasets: the paired difference on each (with its uncorrected 95% t-interval and the corrected p of the
     pair) and their equally weighted mean over the shared datasets, whose variance adds the datasets' variances
     of the mean; its t quantile is the smallest dataset's, which is conservative (Welch–Satterthwaite degrees of
     freedom are at least the smallest dataset's). */
  function summaryTable(shared, nameA, nameB) {
    var table = document.createElement("table");
    table.className = "results";
    table.id = "compare-summary";
    var caption = table.createCaption();
    caption.textContent = nameB + " − " + nameA + " on every shared dataset (main metric ×100): the paired mean " +
      "difference, its 95% t-interval (not corrected for the number of pairs) and the corrected p-value of the pair. " +
      "Each dataset below opens to its per-query scatter.";
    var head = table.createTHead().insertRow();
    ["Dataset", "Δ", "95% CI (uncorrected)", "Corrected p", "Queries won / tied / lost"].forEach(function (text) {
      var th = document.createElement("th");
      th.scope = "col";
      th.textContent = text;
      head.appendChild(th);
    });
    var body = table.createTBody(), total = 0, variance = 0;
    shared.forEach(function (item) {
      var d = item.b.values.map(function (value, i) { return value - item.a.values[i]; });
      var m = mean(d), n = d.length;
      var sd = n > 1 ? Math.sqrt(d.reduce(function (sum, x) { return sum + (x - m) * (x - m); }, 0) / (n - 1)) : 0;
      var half = item.info.t975 * sd / Math.sqrt(n);
      var won = d.filter(function (x) { return x > 1e-9; }).length, lost = d.filter(function (x) { return x < -1e-9; }).length;
      var row = body.insertRow();
      cell(row, item.id, true);
      cell(row, (100 * m).toFixed(2));
      cell(row, "[" + (100 * (m - half)).toFixed(2) + ", " + (100 * (m + half)).toFixed(2) + "]");
      cell(row, pairs.formatP(item.a.p[item.info.models.indexOf(nameB)], item.info.alpha));
      cell(row, won + " / " + (n - won - lost) + " / " + lost);
      total += m;
      variance += sd * sd / n;
    });
    var k = shared.length, overall = total / k;
    var conservative = shared.reduce(function (t, item) { return Math.max(t, item.info.t975); }, 0);
    var halfAll = conservative * Math.sqrt(variance) / k;
    var foot = table.createTFoot().insertRow();
    cell(foot, "Mean over the " + k + " shared dataset" + (k === 1 ? "" : "s") + " (equal weights)", true);
    cell(foot, (100 * overall).toFixed(2));
    cell(foot, "[" + (100 * (overall - halfAll)).toFixed(2) + ", " + (100 * (overall + halfAll)).toFixed(2) + "]");
    cell(foot, "–");
    cell(foot, "–");
    var wrap = document.createElement("div");
    wrap.className = "table-wrap";
    wrap.tabIndex = 0;  /* a box that scrolls on a phone: reachable from the keyboard, named by its caption */
    wrap.setAttribute("role", "region");
    caption.id = "compare-summary-caption";
    wrap.setAttribute("aria-labelledby", caption.id);
    wrap.appendChild(table);
    return wrap;
  }

  function update() {
    var nameA = first.value, nameB = second.value;
    var params = new URLSearchParams({ a: nameA, b: nameB });
    try { window.history.replaceState(null, "", window.location.pathname + "?" + params.toString()); } catch (e) { /* file:// */ }
    results.textContent = "";
    if (nameA === nameB) {
      status.textContent = "Pick two different models: " + nameA + " compared with itself differs on no query.";
      return;
    }
    status.textContent = "Loading…";
    Promise.all([loadModel(nameA), loadModel(nameB)]).then(function (pair) {
      results.textContent = "";
      var shared = Object.keys(datasets).filter(function (datasetId) {
        return pair[0][datasetId] && pair[1][datasetId];
      }).map(function (datasetId) {
        return { id: datasetId, info: datasets[datasetId], a: pair[0][datasetId], b: pair[1][datasetId] };
      });
      if (shared.length) { results.appendChild(summaryTable(shared, nameA, nameB)); }
      shared.forEach(function (item, index) { block(item.id, item.info, item.a, item.b, nameA, nameB, index === 0); });
      status.textContent = shared.length ? shared.length + " datasets with results for both models." :
        "These two models have no dataset in common.";
    }, function (error) { status.textContent = error.message; });
  }

  /* A filter box over each select (a board may hold a thousand models): the options that hold every typed word,
     in any order and case, stay; Enter picks the first of them. The chosen model stays chosen while filtered out. */
  function searchable(select) {
    var box = document.getElementById(select.id + "-filter"), count = document.getElementById(select.id + "-count");
    var options = Array.prototype.slice.call(select.options);
    var texts = options.map(function (o) { return o.value.toLowerCase(); });
    function matches() {
      var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = [];
      options.forEach(function (option, i) {
        var keep = words.every(function (word) { return texts[i].indexOf(word) >= 0; });
        option.hidden = !keep && !option.selected;
        if (keep) { shown.push(option); }
      });
      count.textContent = words.length ? shown.length.toLocaleString("en") + " of " +
        options.length.toLocaleString("en") + " models match" : "";
      return shown;
    }
    box.hidden = false;
    box.addEventListener("input", matches);
    box.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") { return; }
      event.preventDefault();
      var shown = matches();
      if (shown.length && shown[0].value !== select.value) {
        select.value = shown[0].value;
        matches();
        update();
      }
    });
    select.addEventListener("change", matches);
  }

  /* The address's models must be models of this site: an unknown id is said, never replaced by another model. */
  var params = new URLSearchParams(window.location.search), unknown = [];
  [["a", first], ["b", second]].forEach(function (pair) {
    var wanted = params.get(pair[0]);
    if (wanted === null) { return; }
    if (slugOf(pair[1], wanted)) { pair[1].value = wanted; } else { unknown.push(pair[0] + "=" + wanted); }
  });
  first.addEventListener("change", update);
  second.addEventListener("change", update);
  [first, second].forEach(searchable);
  if (unknown.length) {
    status.textContent = "No such model on this site: " + unknown.join(", ") + " (from the address). Pick the " +
      "models above.";
  } else if (window.Plotly && first.value) { update(); }
})();
