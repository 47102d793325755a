/* Compare page: per-query scatter of two models on every dataset both have results for.
   Per-model data files are loaded by pairs.js with <script> elements, which works from file:// and http. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var data = window.irboardData || {};
  var datasets = data.datasets || {};
  var groups = data.groups || {};
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
    function judged(entry) { return entry.j === undefined ? "" : " (" + info.judged + " " + entry.j.toFixed(2) + ")"; }
    summary.textContent = info.metric + " ×100: " + nameA + " " + (100 * mean(a.values)).toFixed(2) + judged(a) +
      ", " + nameB + " " + (100 * mean(b.values)).toFixed(2) + judged(b) + ". " + nameB + " wins " + wins + ", ties " + ties +
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

  /* better / worse where the corrected test rejects; equivalent where the interval (then Bonferroni's
     simultaneous one) lies within the margin; undetermined otherwise (leaderboard/analysis/verdicts.py). */
  function verdictWord(p, m, alpha, interval, margin) {
    if (p === undefined || p === null) { return "–"; }
    if (p < alpha) { return m > 0 ? "better" : "worse"; }
    return interval[0] > -margin && interval[1] < margin ? "equivalent" : "undetermined";
  }

  /* Per dataset: the paired difference with the interval its corrected verdict rests on (pairs.verdictInterval)
     and the corrected p of the pair, as on the dataset pages. Per group where both models are ranked: the group
     mean's difference with the board's corrected test of it (the test behind the group's rank ranges). */
  function summaryTable(shared, nameA, nameB, dataA) {
    var table = document.createElement("table");
    table.className = "results";
    table.id = "compare-summary";
    var caption = table.createCaption();  /* one line; the whole legend is in the fold under the table (legend) */
    caption.textContent = nameB + " − " + nameA + " (main metric ×100) on every shared dataset, then each group " +
      "mean: the paired difference, the interval of its corrected verdict, the corrected p, Judged@k and ◊ where " +
      "unjudged documents could flip the verdict. ";
    var how = document.createElement("a");
    how.href = "#how-text";
    how.textContent = "How this is computed";
    caption.appendChild(how);
    caption.appendChild(document.createTextNode("."));
    var head = table.createTHead().insertRow();
    ["Dataset or group", "Δ", "Interval of the verdict", "Corrected p", "Verdict for " + nameB,
      "Queries won / tied / lost", "Judged@k, " + nameA + " / " + nameB, "Over the unjudged documents"].forEach(function (text) {
      var th = document.createElement("th");
      th.scope = "col";
      th.textContent = text;
      head.appendChild(th);
    });
    var body = table.createTBody(), byId = {};
    shared.forEach(function (item) {
      var pair = pairs.differences(item.a.values, item.b.values), m = pair.mean, n = pair.n;
      var p = item.a.p[item.info.models.indexOf(nameB)];
      var interval = pairs.verdictInterval(m, n > 1 ? pair.sd / Math.sqrt(n) : 0, n - 1, p, item.info.alpha, item.info.pairs);
      var won = pair.d.filter(function (x) { return x > 1e-9; }).length, lost = pair.d.filter(function (x) { return x < -1e-9; }).length;
      var row = body.insertRow();
      row.dataset.dataset = item.id;
      cell(row, item.id, true);
      cell(row, (100 * m).toFixed(2));
      cell(row, pairs.range(interval));
      cell(row, pairs.formatP(p, item.info.alpha));
      cell(row, verdictWord(p, m, item.info.alpha, interval, item.info.margin));
      cell(row, won + " / " + (n - won - lost) + " / " + lost);
      judgedCells(row, item.info.judged, item.a.j, item.b.j, (item.a.f || []).indexOf(item.info.models.indexOf(nameB)) !== -1);
      byId[item.id] = { mean: m, variance: n > 1 ? pair.sd * pair.sd / n : 0, n: n, alpha: item.info.alpha,
        margin: item.info.margin };
    });
    var foot = table.createTFoot();
    Object.keys(groups).forEach(function (name) {
      var group = groups[name];
      if (!group.datasets.every(function (id) { return byId[id]; })) { return; }
      var total = 0, variance = 0, dfTerms = 0, alpha = byId[group.datasets[0]].alpha;
      group.datasets.forEach(function (id, k) {
        var part = group.weights[k] * group.weights[k] * byId[id].variance;
        total += group.weights[k] * byId[id].mean;
        variance += part;
        dfTerms += part * part / Math.max(byId[id].n - 1, 1);
      });
      var df = dfTerms > 0 ? variance * variance / dfTerms : 1;
      var ranks = group.models, p;
      if (dataA.groups && dataA.groups[name] && ranks.indexOf(nameB) >= 0) { p = dataA.groups[name][ranks.indexOf(nameB)]; }
      var row = foot.insertRow(), interval = pairs.verdictInterval(total, Math.sqrt(variance), df, p, alpha, group.pairs);
      row.dataset.group = name;
      cell(row, name + ": group mean (" + group.datasets.length + " dataset" + (group.datasets.length === 1 ? "" : "s") + ")", true);
      cell(row, (100 * total).toFixed(2));
      cell(row, p === undefined ? "–" : pairs.range(interval));
      cell(row, p === undefined ? "not ranked" : pairs.formatP(p, alpha));
      cell(row, p === undefined ? "– (both need verified results on every dataset of the group)" :
        verdictWord(p, total, alpha, interval, byId[group.datasets[0]].margin));
      cell(row, "–");
      var flips = dataA.groupFlips && dataA.groupFlips[name];
      judgedCells(row, null, null, null, p !== undefined && !!flips && flips.indexOf(ranks.indexOf(nameB)) !== -1,
                  p === undefined);
    });
    return wrapped(table, "compare-summary-caption");
  }

  /* The last two cells of a summary row: each model's Judged@k at the main metric's cutoff (the dataset page's
     figure) and whether the row's verdict holds over the hole bounds of both models (◊ where it could flip:
     leaderboard/analysis/robust.py, group_robust.py for a group mean). */
  function judgedCells(row, name, a, b, flips, unranked) {
    function shown(value) { return value === undefined || value === null ? "–" : value.toFixed(2); }
    var judged = cell(row, name ? name + " " + shown(a) + " / " + shown(b) : "–");
    if (name) { judged.title = name + ": the share of each model's top documents that is judged"; }
    var holds = cell(row, unranked ? "–" : flips ? "" : "holds");
    if (flips) {
      var mark = document.createElement("span");
      mark.className = "flip";
      mark.title = "could flip: unjudged documents within the cutoff could change this verdict";
      mark.textContent = "◊";
      holds.appendChild(mark);
      holds.appendChild(document.createTextNode(" could flip"));
    }
  }

  /* The summary table's whole legend, first in the page's fold of its method (compare.html), moved under the table. */
  var methodFold = document.getElementById("how");  /* kept while the results are cleared and drawn again */
  function legend(shared, nameA, nameB) {
    var fold = methodFold, text = fold.querySelector("#how-legend");
    if (!text) {
      text = document.createElement("p");
      text.id = "how-legend";
      fold.querySelector("#how-text").prepend(text);
    }
    text.textContent = nameB + " − " + nameA + " (main metric ×100): on every shared dataset the paired mean " +
      "difference, the interval its corrected verdict rests on (it excludes 0 exactly when the corrected p is below " +
      "α; for pairs not found different it is Bonferroni's simultaneous interval) and the corrected p-value of the " +
      "pair on that dataset; then each group mean, with the board's corrected test of the group means (the one " +
      "behind its rank ranges). Verdict: better or worse where the corrected test rejects; equivalent where the " +
      "interval lies within the equivalence margin (±" + (100 * ((shared[0] || {}).info || {}).margin).toFixed(2) +
      " ×100); undetermined otherwise. Judged@k: the share of each model's top k documents that is judged (k the " +
      "main metric's cutoff); ◊ could flip: the verdict may not hold over the hole bounds of both models (the range " +
      "of each per-query value over every labelling of the unjudged documents within the cutoff). Each dataset " +
      "below opens to its per-query scatter.";
    return fold;
  }

  function wrapped(table, captionId) {
    var wrap = document.createElement("div");
    wrap.className = "table-wrap";
    wrap.tabIndex = 0;  /* a box that scrolls on a phone: reachable from the keyboard, named by its caption */
    wrap.setAttribute("role", "region");
    table.caption.id = captionId;
    wrap.setAttribute("aria-labelledby", captionId);
    wrap.appendChild(table);
    return wrap;
  }

  /* Per group: random-effects pooling of the per-dataset differences (pairs.pool; datasets of one parent are one
     unit): will B beat A on a new dataset of the group? */
  function predictions(shared, nameA, nameB) {
    var byId = {};
    shared.forEach(function (item) {
      var pair = pairs.differences(item.a.values, item.b.values);
      byId[item.id] = { mean: pair.mean, variance: pair.n > 1 ? pair.sd * pair.sd / pair.n : 0, alpha: item.info.alpha,
        margin: item.info.margin };
    });
    var section = document.createElement("div"), rows = [];
    section.className = "compare-pooled";
    Object.keys(groups).forEach(function (name) {
      var group = groups[name], units = {}, order = [];
      group.datasets.forEach(function (id, k) {
        if (!byId[id]) { return; }
        if (!units[group.units[k]]) { units[group.units[k]] = []; order.push(group.units[k]); }
        units[group.units[k]].push(id);
      });
      if (order.length < 2) { return; }
      var y = order.map(function (u) { return units[u].reduce(function (s, id) { return s + byId[id].mean; }, 0) / units[u].length; });
      var v = order.map(function (u) {
        return units[u].reduce(function (s, id) { return s + byId[id].variance; }, 0) / (units[u].length * units[u].length);
      });
      var first = byId[units[order[0]][0]], fit = pairs.pool(y, v, group.chi20, first.alpha);
      rows.push({ name: name, units: order, y: y, v: v, fit: fit, margin: first.margin, alpha: first.alpha,
        equivalence: pairs.poolEquivalence(fit, first.alpha, group.pairs, first.margin, group.minEquivalence) });
    });
    if (!rows.length) { return section; }
    var level = String(+(100 * (1 - rows[0].alpha)).toPrecision(10)) + "%";  /* best_words.level */
    var table = document.createElement("table");
    table.className = "results";
    table.id = "compare-pooled";
    table.createCaption().textContent = "Will " + nameB + " beat " + nameA + " on a new dataset of the group? " +
      "Random-effects pooling of the per-dataset differences (×100): the pooled difference with its " + level + " " +
      "interval (the hull of the modified Hartung–Knapp interval and the t-interval of the unweighted mean of the " +
      "units; for these datasets' population, not corrected for the number of pairs: a different " +
      "question from the group mean's test above), τ the spread of the true differences between datasets, the " + level + " " +
      "prediction interval for a new dataset's true difference and the probability that " + nameB + " is better " +
      "there. It assumes the group's datasets are exchangeable: a new dataset is like a random one of them. " +
      "Equivalence: the same interval at Bonferroni's level (α / the group's pairs, " +
      "the family of the group's verdicts above) — the interval this verdict rests on; equivalent where it lies " +
      "within ± the margin (" + (100 * rows[0].margin).toFixed(2) + " ×100), so all such claims hold together " +
      "with probability at least 1 − α; withheld with fewer than " + groups[rows[0].name].minEquivalence +
      " units, where a rare kind of dataset is often missing from the sample. It speaks of the mean over the " +
      "group's datasets: a new dataset may still differ by more (the prediction interval).";
    var head = table.createTHead().insertRow();
    ["Group", "Units pooled", "Pooled Δ", level + " CI (pooled)", "τ", level + " prediction interval",
      "P(" + nameB + " better on a new dataset)", "Interval of the equivalence verdict", "Pooled equivalence"].forEach(function (text) {
      var th = document.createElement("th");
      th.scope = "col";
      th.textContent = text;
      head.appendChild(th);
    });
    var body = table.createTBody();
    rows.forEach(function (item) {
      var fit = item.fit, row = body.insertRow();
      row.dataset.group = item.name;
      cell(row, item.name, true);
      cell(row, String(fit.k));
      cell(row, (100 * fit.mean).toFixed(2));
      cell(row, pairs.range(fit.ci));
      cell(row, (100 * fit.tau).toFixed(2));
      cell(row, fit.prediction ? pairs.range(fit.prediction) : "– (needs 3 datasets)");
      cell(row, fit.pBeats === null ? "–" : (100 * fit.pBeats).toFixed(0) + "%");
      cell(row, pairs.range(item.equivalence.interval));
      cell(row, item.equivalence.withheld ? "withheld: " + fit.k + " units, fewer than " +
        groups[item.name].minEquivalence : item.equivalence.equivalent ? "equivalent" : "not shown equivalent");
    });
    section.appendChild(wrapped(table, "compare-pooled-caption"));
    var note = document.createElement("p");
    note.className = "note";
    note.textContent = "Forest plots: each dataset's difference with its own 95% interval (secondary: not corrected " +
      "for the number of pairs; the verdicts above rest on the corrected ones), the pooled difference with its " +
      level + " interval, its equivalence interval (Bonferroni's level) against the shaded margin and the " +
      level + " prediction interval for a new dataset of the group.";
    section.appendChild(note);
    rows.forEach(function (item, index) {
      var details = document.createElement("details");
      details.className = "compare-forest";
      details.open = index === rows.length - 1;
      var summary = document.createElement("summary");
      summary.textContent = "Forest plot: " + item.name;
      details.appendChild(summary);
      var plot = document.createElement("div");
      plot.className = "plot";
      details.appendChild(plot);
      section.appendChild(details);
      function draw() { if (details.open && !plot.dataset.drawn) { plot.dataset.drawn = "1"; forest(plot, item, nameA, nameB); } }
      details.addEventListener("toggle", draw);
      window.setTimeout(draw, 0);
    });
    return section;
  }

  /* Each unit's difference with its 95% t-interval (normal quantile for large n: 1.96 × SE), the pooled mean with
     its Hartung–Knapp interval and the prediction interval for a new dataset. */
  function forest(plot, item, nameA, nameB) {
    var equivalence = item.equivalence.interval;
    var lows = item.y.map(function (y, k) { return y - 1.96 * Math.sqrt(item.v[k]); }).concat([item.fit.ci[0],
      equivalence[0], item.fit.prediction ? item.fit.prediction[0] : item.fit.mean]);
    var highs = item.y.map(function (y, k) { return y + 1.96 * Math.sqrt(item.v[k]); }).concat([item.fit.ci[1],
      equivalence[1], item.fit.prediction ? item.fit.prediction[1] : item.fit.mean]);
    /* the axis spans every row but the equivalence interval, and the margin: with two datasets (t with 1 degree of
       freedom at Bonferroni's level) that interval can be a hundred times wider and would hide the rest */
    var others = lows.filter(function (x, k) { return k !== item.units.length + 1; })
      .concat(highs.filter(function (x, k) { return k !== item.units.length + 1; }), [-item.margin, item.margin]);
    var left = Math.min.apply(null, others), right = Math.max.apply(null, others), pad = 0.08 * (right - left);
    var beyond = equivalence[0] < left - pad || equivalence[1] > right + pad;
    var level = String(+(100 * (1 - item.alpha)).toPrecision(10)) + "%";
    var labels = item.units.concat(["pooled (" + level + " CI)", "pooled (equivalence interval" +
      (beyond ? ", beyond the axis: see the table)" : ")"), "new dataset (" + level + " prediction)"]);
    var centres = item.y.concat([item.fit.mean, item.fit.mean, item.fit.mean]);
    window.irboardPlot(plot, [{
      type: "scatter", mode: "markers", y: labels.map(plain), x: centres.map(function (x) { return 100 * x; }),
      error_x: { type: "data", symmetric: false, array: highs.map(function (h, k) { return 100 * (h - centres[k]); }),
        arrayminus: lows.map(function (l, k) { return 100 * (centres[k] - l); }), color: "#1f5fa8" },
      marker: { color: labels.map(function (label, k) { return k >= item.units.length ? "#b35900" : "#1f5fa8"; }),
        symbol: labels.map(function (label, k) { return k >= item.units.length ? "diamond" : "square"; }), size: 9 },
      hovertemplate: "%{y}<br>Δ %{x:.2f}<extra></extra>"
    }], {
      height: 120 + 28 * labels.length, margin: { l: 200, r: 20, t: 20, b: 50 },
      xaxis: { title: { text: plain(nameB + " − " + nameA + " ×100") }, range: [100 * (left - pad), 100 * (right + pad)],
        zeroline: true, zerolinecolor: "#8c959f", gridcolor: "#eaeef2" },
      yaxis: { autorange: "reversed", automargin: true },
      /* the equivalence margin: "equivalent" where the equivalence interval lies inside this band */
      shapes: [{ type: "rect", xref: "x", yref: "paper", x0: -100 * item.margin, x1: 100 * item.margin, y0: 0, y1: 1,
        fillcolor: "#2da44e", opacity: 0.12, line: { width: 0 } }],
      font: { family: "system-ui, sans-serif", size: 12, color: "#1f2328" }
    });
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
      if (shared.length) {
        results.appendChild(summaryTable(shared, nameA, nameB, pair[0]));
        results.appendChild(legend(shared, nameA, nameB));
        results.appendChild(predictions(shared, nameA, nameB));
      }
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
