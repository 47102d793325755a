/* Home page: "Your own benchmark" (templates/_benchmark.html). The reader ticks datasets (and, optionally, types
   weights); the page loads data/queries/<slug>.js of each chosen dataset (per-query values of the main metric,
   leaderboard/web/custom_data.py) and aggregates them exactly as the build aggregates a group
   (leaderboard/analysis/custom.py, aggregate._GroupAccumulator, ranks.py; docs/statistics.md): the group mean of
   every model with a result on each chosen dataset, its score interval, rank ranges from corrected pairwise tests
   of the group means among the ranked models, the best set (★) and its sentence, and the mean rank. Sums run in
   numpy's order (pairwise summation along a row), so the page's means are the build's to the last bit; the
   Student t distribution is site/js/student_t.js's (about 1e-15). Nothing is drawn at random. The
   address keeps the choice: ?datasets=a,b&weights=2,1. window.irboardBenchmark.compute(ids, weights) returns a
   promise of the result (the benchmark script and the tests call it). */
(function () {
  "use strict";

  var form = document.getElementById("bench-form");
  if (!form) { return; }
  var ALPHA = Number(form.dataset.alpha), CORRECTION = form.dataset.correction, LEVEL = form.dataset.level;
  var NAME = form.dataset.name;
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=ds]"));
  var order = boxes.map(function (box) { return box.value; });  /* the board's dataset order */
  var boxOf = {}, weightOf = {};
  boxes.forEach(function (box) { boxOf[box.value] = box; });
  Array.prototype.forEach.call(form.querySelectorAll("input[name=w]"), function (input) {
    weightOf[input.dataset.for] = input;
  });
  var registered = Array.prototype.map.call(form.querySelectorAll("button.bench-group"), function (button) {
    return { name: button.textContent, ids: button.dataset.datasets.split(",") };
  });

  /* --- numbers as numpy computes them ----------------------------------------------------------------------- */

  /* numpy's pairwise summation of a[start .. start + n) (what sum, mean and var do along a row). */
  function pairwise(a, start, n) {
    var i, res;
    if (n < 8) {
      res = 0;
      for (i = 0; i < n; i += 1) { res += a[start + i]; }
      return res;
    }
    if (n <= 128) {
      var r0 = a[start], r1 = a[start + 1], r2 = a[start + 2], r3 = a[start + 3], r4 = a[start + 4],
        r5 = a[start + 5], r6 = a[start + 6], r7 = a[start + 7], end = n - (n % 8);
      for (i = 8; i < end; i += 8) {
        var k = start + i;
        r0 += a[k]; r1 += a[k + 1]; r2 += a[k + 2]; r3 += a[k + 3];
        r4 += a[k + 4]; r5 += a[k + 5]; r6 += a[k + 6]; r7 += a[k + 7];
      }
      res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
      for (; i < n; i += 1) { res += a[start + i]; }
      return res;
    }
    var half = Math.floor(n / 2);
    half -= half % 8;
    return pairwise(a, start, half) + pairwise(a, start + half, n - half);
  }

  var studentT = window.irboardStudentT, tSf = studentT.sf, tUpperQuantile = studentT.upperQuantile;

  /* stats.corrected_matrix over the pairs i < j (row by row), Holm, Benjamini–Hochberg or none. */
  function corrected(flat) {
    var m = flat.length, index = new Array(m), out = new Float64Array(m), k;
    if (CORRECTION === "none") { return flat; }
    for (k = 0; k < m; k += 1) { index[k] = k; }
    index.sort(function (a, b) { return flat[a] - flat[b]; });
    if (CORRECTION === "holm") {
      var running = -Infinity;
      for (k = 0; k < m; k += 1) {
        running = Math.max(running, flat[index[k]] * (m - k));
        out[index[k]] = Math.min(running, 1);
      }
    } else {
      var low = Infinity;
      for (k = m - 1; k >= 0; k -= 1) {
        low = Math.min(low, flat[index[k]] * m / (k + 1));
        out[index[k]] = Math.min(low, 1);
      }
    }
    return out;
  }

  var NEVER_DOUBTED = 2147483647;
  /* ranks._sizes of one one-sided p-value. */
  function beatSize(p) {
    if (p <= 0) { return NEVER_DOUBTED; }
    var size = Math.min(Math.ceil(ALPHA / p), NEVER_DOUBTED);
    if (size >= 2 && p >= ALPHA / Math.max(size - 1, 1)) { size -= 1; }
    if (size < NEVER_DOUBTED && p < ALPHA / Math.max(size, 1)) { size += 1; }
    return size;
  }

  /* scipy.stats.rankdata(-values, "average"): 1 for the highest. */
  function averageRanks(values) {
    var n = values.length, index = [], ranks = new Float64Array(n);
    for (var i = 0; i < n; i += 1) { index.push(i); }
    index.sort(function (a, b) { return values[b] - values[a]; });
    for (var start = 0; start < n;) {
      var end = start;
      while (end + 1 < n && values[index[end + 1]] === values[index[start]]) { end += 1; }
      for (var k = start; k <= end; k += 1) { ranks[index[k]] = (start + end) / 2 + 1; }
      start = end + 1;
    }
    return ranks;
  }

  /* --- one dataset: means, variances and the SDs of paired differences, as the build's dataset board ---------- */

  function datasetStats(data) {
    if (data.stats) { return data.stats; }
    var m = data.models.length, n = data.n, values = new Float64Array(m * n), means = new Float64Array(m);
    var variances = new Float64Array(m), low = new Float64Array(m), high = new Float64Array(m), i, q;
    var squares = new Float64Array(n), centred = new Float64Array(m * n), sums = new Float64Array(m);
    for (i = 0; i < m; i += 1) {
      var row = data.values[i], lo = Infinity, hi = -Infinity;
      for (q = 0; q < n; q += 1) {
        values[i * n + q] = row[q];
        if (row[q] < lo) { lo = row[q]; }
        if (row[q] > hi) { hi = row[q]; }
      }
      means[i] = pairwise(values, i * n, n) / n;
      for (q = 0; q < n; q += 1) {
        var c = values[i * n + q] - means[i];
        squares[q] = c * c;
        centred[i * n + q] = c;
      }
      variances[i] = pairwise(squares, 0, n) / n;  /* ndarray.var: divide by n */
      sums[i] = 0;  /* the covariance's diagonal, summed in order as a matrix product's */
      for (q = 0; q < n; q += 1) { sums[i] += squares[q]; }
      low[i] = lo;
      high[i] = hi;
    }
    var position = {};
    data.models.forEach(function (id, k) { position[id] = k; });
    data.stats = { means: means, variances: variances, low: low, high: high, centred: centred, squares: sums,
                   position: position,
                   sd: new Float32Array(m * m).fill(NaN) };  /* each pair's, once computed */
    return data.stats;
  }

  /* effects.spread's SD of the per-query differences of rows i and j, stored as float32 like the build's. */
  function differenceSd(data, s, i, j) {
    var key = i < j ? i * data.models.length + j : j * data.models.length + i;
    if (!isNaN(s.sd[key])) { return s.sd[key]; }
    var n = data.n, c = s.centred, a = i * n, b = j * n, cij = 0;
    for (var q = 0; q < n; q += 1) { cij += c[a + q] * c[b + q]; }
    var total = s.squares[i] / (n - 1) + s.squares[j] / (n - 1), diff = total - 2 * (cij / (n - 1));
    if (diff <= 1e-12 * total) { diff = 0; }
    var sd = Math.fround(Math.sqrt(diff));
    s.sd[key] = sd;
    return sd;
  }

  /* --- the group ------------------------------------------------------------------------------------------- */

  /* aggregate._weights, or the typed weights over their sum (analysis/custom.py's normalised). */
  function groupWeights(ids, typed) {
    if (typed) {
      var total = 0;
      typed.forEach(function (w) { total += w; });
      return typed.map(function (w) { return w / total; });
    }
    var units = {}, count = 0;
    ids.forEach(function (id) {
      var unit = boxOf[id].dataset.unit;
      if (!units[unit]) { units[unit] = 0; count += 1; }
      units[unit] += 1;
    });
    return ids.map(function (id) { return 1 / count / units[boxOf[id].dataset.unit]; });
  }

  function registeredName(ids, typed) {
    if (typed) { return null; }
    var key = ids.slice().sort().join(",");
    var found = registered.filter(function (group) { return group.ids.slice().sort().join(",") === key; });
    return found.length ? found[0].name : null;
  }

  /* The group of `ids` (the board's order) with weights `typed` (null: the group rule), from the loaded data:
     aggregate._GroupAccumulator.finish, formula for formula. */
  function aggregate(ids, typed, datasets) {
    var weights = groupWeights(ids, typed), models = {}, names = [];
    ids.forEach(function (id) {
      datasets[id].models.forEach(function (model) {
        if (!models[model]) { models[model] = 0; names.push(model); }
        models[model] += 1;
      });
    });
    var complete = names.filter(function (model) { return models[model] === ids.length; }).sort();
    var count = complete.length, stats = ids.map(function (id) { return datasetStats(datasets[id]); });
    var rows = stats.map(function (s) { return complete.map(function (model) { return s.position[model]; }); });
    var ranked = complete.map(function (model, k) {
      return ids.every(function (id, d) { return datasets[id].ranked[rows[d][k]] === 1; });
    });
    var means = new Float64Array(count), ranks = new Float64Array(count), variance = new Float64Array(count);
    var dfTerms = new Float64Array(count), bounded = new Uint8Array(count).fill(1), share = 0, k, d;
    var rankedRows = [];
    for (k = 0; k < count; k += 1) { if (ranked[k]) { rankedRows.push(k); } }
    ids.forEach(function (id, d) {
      var s = stats[d], w = weights[d], n = datasets[id].n;
      var dm = rows[d].map(function (row) { return s.means[row]; });
      for (k = 0; k < count; k += 1) {
        means[k] += w * dm[k];
        var part = w * w * s.variances[rows[d][k]] / n;
        variance[k] += part;
        dfTerms[k] += part * part / Math.max(n - 1, 1);
        if (!(s.low[rows[d][k]] >= 0 && s.high[rows[d][k]] <= 1)) { bounded[k] = 0; }
      }
      share += w * w / n;
      if (rankedRows.length) {
        var r = averageRanks(rankedRows.map(function (k) { return dm[k]; }));
        rankedRows.forEach(function (k, p) { ranks[k] += w * r[p]; });
      }
    });
    /* the score interval of each group mean (stats.score_bounds) */
    var ci = [];
    for (k = 0; k < count; k += 1) {
      var df = dfTerms[k] > 0 ? variance[k] * variance[k] / dfTerms[k] : 1;
      var q = tUpperQuantile(1 - (0.5 + (1 - ALPHA) / 2), Math.max(df, 1)), mean = means[k];
      var spread = mean * (1 - mean), q2 = q * q, c = spread > 0 ? q2 * variance[k] / spread : q2 * share;
      var centre = (mean + c / 2) / (1 + c), half = Math.sqrt(c * spread + c * c / 4) / (1 + c);
      var tHalf = q * Math.sqrt(variance[k]);
      var lo = bounded[k] ? centre - half : mean - tHalf, hi = bounded[k] ? centre + half : mean + tHalf;
      ci.push([Math.min(lo, mean), Math.max(hi, mean)]);
    }
    /* the tests of the ranked models' group means (ranks.group_differences, difference_pvalues, best_set) */
    var m = rankedRows.length, testable = ids.some(function (id) { return datasets[id].n >= 2; });
    var total = new Float64Array(m * m), varDiff = new Float64Array(m * m), dfDiff = new Float64Array(m * m);
    var a, b;
    if (testable) {
      ids.forEach(function (id, d) {
        var s = stats[d], w = weights[d], n = datasets[id].n, data = datasets[id];
        for (a = 0; a < m; a += 1) {
          var ra = rows[d][rankedRows[a]];
          for (b = a + 1; b < m; b += 1) {
            var rb = rows[d][rankedRows[b]], sd = n >= 2 ? differenceSd(data, s, ra, rb) : 0;
            var part = w * w * (sd * sd) / n, diff = s.means[ra] - s.means[rb];
            total[a * m + b] = w * diff + total[a * m + b];
            total[b * m + a] = w * -diff + total[b * m + a];
            varDiff[a * m + b] = part + varDiff[a * m + b];
            dfDiff[a * m + b] = part * part / Math.max(n - 1, 1) + dfDiff[a * m + b];
          }
        }
      });
    }
    var flat = [], p, t;
    for (a = 0; a < m; a += 1) {
      for (b = a + 1; b < m; b += 1) {
        var v = varDiff[a * m + b], dterms = dfDiff[a * m + b];
        dfDiff[a * m + b] = dfDiff[b * m + a] = dterms > 0 ? v * v / dterms : 1;
        varDiff[b * m + a] = v;
        if (!testable) { p = 1; }
        else if (v > 0) { p = Math.min(2 * tSf(Math.abs(total[a * m + b]) / Math.sqrt(v), dfDiff[a * m + b]), 1); }
        else { p = total[a * m + b] !== 0 ? 0 : 1; }
        flat.push(p);
      }
    }
    var adjusted = testable ? corrected(flat) : flat, better = new Int32Array(m), worse = new Int32Array(m);
    var kept = new Uint8Array(m).fill(1), at = 0;
    for (a = 0; a < m; a += 1) {
      for (b = a + 1; b < m; b += 1) {
        var ma = means[rankedRows[a]], mb = means[rankedRows[b]];
        if (adjusted[at] < ALPHA) {
          if (mb > ma) { better[a] += 1; worse[b] += 1; }
          if (mb < ma) { better[b] += 1; worse[a] += 1; }
        }
        at += 1;
      }
    }
    if (testable && m >= 2) {  /* best_set: i is out when some j is better at alpha / (m - 1), one-sided */
      var better_t = function (a, b) {  /* ranks._better_t */
        if (a === b) { return -Infinity; }
        var value = -total[a * m + b] / Math.sqrt(varDiff[a * m + b]);
        return isNaN(value) ? -Infinity : value;
      };
      var beaten = function (a, b) { return beatSize(tSf(better_t(a, b), Math.max(dfDiff[a * m + b], 1))) >= m; };
      for (a = 0; a < m; a += 1) {  /* most rows are decided by their largest t, the others by every comparison */
        var best = 0, largest = -Infinity;
        for (b = 0; b < m; b += 1) {
          t = better_t(a, b);
          if (t > largest) { largest = t; best = b; }
        }
        if (beaten(a, best)) { kept[a] = 0; continue; }
        for (b = 0; b < m && kept[a]; b += 1) { if (beaten(a, b)) { kept[a] = 0; } }
      }
    }
    var result = [];
    complete.forEach(function (model, k) {
      var p = rankedRows.indexOf(k);
      result.push({ model: model, mean: means[k], ci: ci[k], ranked: ranked[k],
                    meanRank: ranked[k] ? ranks[k] : null,
                    range: p === -1 ? null : [1 + better[p], m - worse[p]], top: p !== -1 && kept[p] === 1 });
    });
    return { ids: ids, weights: weights, name: registeredName(ids, typed), models: result, ranked: m,
             missing: names.length - count };
  }

  /* --- the page ---------------------------------------------------------------------------------------------- */

  var loading = {};
  function load(id) {
    if (!loading[id]) {
      loading[id] = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = "data/queries/" + boxOf[id].dataset.slug + ".js";
        script.onload = function () { resolve(window.irboardData.queries[id]); };
        script.onerror = function () { loading[id] = null; reject(new Error("cannot load the per-query values of " + id)); };
        document.head.appendChild(script);
      });
    }
    return loading[id];
  }

  function escape(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  /* render.format_score, format_ci and format_number(x, 2). */
  function score(x) { return (x * 100).toFixed(2); }
  function interval(ci) { return "[" + score(ci[0]) + ", " + score(ci[1]) + "]"; }
  function grouped(x) {
    var parts = x.toFixed(2).split(".");
    return parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + "." + parts[1];
  }

  /* best_words.sentence for a group among all its ranked models (as the build's home page and ranks page say it). */
  function sentence(where, tops, ranked) {
    if (!ranked) {
      return "No model is ranked on " + where + ": none has a re-scored result on every one of its datasets, so " +
        "the table cannot say which is best.";
    }
    if (ranked === 1) { return "Who could be #1 on " + where + ": " + tops[0] + ", the only model ranked there."; }
    var names = tops.slice(0, 5).join(", ") + (tops.length > 5 ? " and " + (tops.length - 5) + " more" : "");
    return "Who could be #1 on " + where + " at " + LEVEL + ": " + names + " (" + tops.length + " of " + ranked +
      ", marked ★; each other is significantly worse than one of them, one-sided at α / " + (ranked - 1) + ").";
  }

  var board = window.irboardData && window.irboardData.board, homeRow = {}, hrefOf = {};
  (board ? board.rows : []).forEach(function (row, index) { homeRow[row[0]] = index; hrefOf[row[0]] = row[1]; });

  function shown(result) {
    var models = result.models.slice().sort(function (x, y) {
      if (x.ranked !== y.ranked) { return x.ranked ? -1 : 1; }
      return y.mean - x.mean || (homeRow[x.model] || 0) - (homeRow[y.model] || 0);
    });
    var label = result.name || NAME, count = result.ids.length;
    var where = result.name ? result.name + " (" + count + " dataset" + (count !== 1 ? "s" : "") + ")" :
      NAME.toLowerCase() + " (" + count + " dataset" + (count !== 1 ? "s" : "") + ")";
    var tops = models.filter(function (x) { return x.top; }).map(function (x) { return x.model; });
    var answer = document.getElementById("bench-answer");
    answer.textContent = sentence(where, tops, result.ranked);
    answer.hidden = false;
    var html = models.map(function (x) {
      var href = hrefOf[x.model];
      return "<tr data-id=\"" + escape(x.model) + "\"" + (x.ranked ? "" : " class=\"unranked\"") + "><th scope=\"row\">" +
        (href ? "<a href=\"" + escape(href) + "\">" + escape(x.model) + "</a>" : escape(x.model)) + "</th>" +
        "<td class=\"s\">" + score(x.mean) + "</td><td class=\"ci\">" + interval(x.ci) + "</td><td class=\"rk\">" +
        (x.range ? (x.range[0] === x.range[1] ? x.range[0] : x.range[0] + "–" + x.range[1]) : "–") +
        "</td><td class=\"top\">" + (x.top ? "★" : "") + "</td><td class=\"r\">" +
        (x.meanRank === null ? "–" : grouped(x.meanRank)) + "</td></tr>";
    }).join("");
    document.querySelector("#bench-table tbody").innerHTML = html;
    document.getElementById("bench-caption").textContent = label + ": " + result.ids.map(function (id, d) {
      return id + (result.typed ? " (weight " + Number(result.weights[d].toPrecision(3)) + ")" : "");
    }).join(", ") + ". Mean ×100 over the datasets " + (result.typed ? "with your weights" : "with the group rule " +
      "of weights (each unit the same)") + ", " + LEVEL + " score interval; " +
      "rank range from " + (CORRECTION === "holm" ? "Holm-corrected" : "corrected") + " tests of the group means " +
      "among the ranked models; ★ could be #1 at " + LEVEL + "; mean rank over the datasets." +
      (result.missing ? " " + result.missing + " model" + (result.missing !== 1 ? "s lack" : " lacks") +
        " a result on some chosen dataset and " + (result.missing !== 1 ? "have" : "has") + " no mean." : "");
    document.getElementById("bench-wrap").hidden = false;
    var cite = document.getElementById("bench-cite");
    cite.textContent = "In a pull request's summary: irboard compare … --group-datasets " + result.ids.join(",") +
      (result.typed ? " --group-weights " + result.typed.join(",") : "");
    cite.hidden = false;
  }

  /* The chosen datasets in the board's order and their typed weights (null: none typed). */
  function choice() {
    var ids = order.filter(function (id) { return boxOf[id].checked; });
    var any = ids.some(function (id) { return weightOf[id] && weightOf[id].value.trim() !== ""; });
    var typed = any ? ids.map(function (id) {
      var value = Number(weightOf[id].value.trim() || "1");
      return value > 0 && isFinite(value) ? value : NaN;
    }) : null;
    return { ids: ids, typed: typed };
  }

  function keep(ids, typed) {
    var params = new URLSearchParams(window.location.search);
    if (ids.length) { params.set("datasets", ids.join(",")); } else { params.delete("datasets"); }
    if (typed) { params.set("weights", typed.join(",")); } else { params.delete("weights"); }
    var query = params.toString();
    try {
      window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
    } catch (error) { /* some file:// contexts refuse; the result still shows */ }
  }

  var status = document.getElementById("bench-status");
  function compute(ids, typed) {  /* ids in any order, typed (or null) one weight per id */
    var given = ids;
    ids = order.filter(function (id) { return given.indexOf(id) !== -1; });
    if (typed) { typed = ids.map(function (id) { return typed[given.indexOf(id)]; }); }
    var started = performance.now();
    return Promise.all(ids.map(load)).then(function (loaded) {
      var datasets = {};
      ids.forEach(function (id, d) { datasets[id] = loaded[d]; });
      var computedAt = performance.now();
      var result = aggregate(ids, typed, datasets);
      result.typed = typed;
      shown(result);
      result.seconds = (performance.now() - started) / 1000;
      result.computeSeconds = (performance.now() - computedAt) / 1000;
      status.textContent = result.models.length + " models with a result on every chosen dataset (" +
        result.ranked + " ranked).";
      return result;
    });
  }

  function run() {
    var picked = choice();
    if (!picked.ids.length) {
      status.textContent = "Choose at least one dataset.";
      return Promise.resolve(null);
    }
    if (picked.typed && picked.typed.some(isNaN)) {
      status.textContent = "Each weight must be a positive number (empty: 1).";
      return Promise.resolve(null);
    }
    keep(picked.ids, picked.typed);
    status.textContent = "Loading the per-query values of " + picked.ids.length + " dataset" +
      (picked.ids.length !== 1 ? "s" : "") + "…";
    return compute(picked.ids, picked.typed).catch(function (error) { status.textContent = error.message + "."; });
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); run(); });
  Array.prototype.forEach.call(form.querySelectorAll("button.bench-group"), function (button) {
    button.addEventListener("click", function () {
      var ids = button.dataset.datasets.split(",");
      boxes.forEach(function (box) { box.checked = ids.indexOf(box.value) !== -1; });
    });
  });
  document.getElementById("bench-none").addEventListener("click", function () {
    boxes.forEach(function (box) { box.checked = false; });
  });

  /* The address's choice: tick it, type its weights, open the section and compute. */
  var params = new URLSearchParams(window.location.search), written = (params.get("datasets") || "").split(",");
  var asked = written.filter(function (id) { return boxOf[id]; });
  var unknown = written.filter(function (id) { return id && !boxOf[id]; });
  if (asked.length) {
    var weights = params.get("weights") ? params.get("weights").split(",") : [];
    asked.forEach(function (id, k) {
      boxOf[id].checked = true;
      if (weights.length === asked.length && weightOf[id]) { weightOf[id].value = weights[k]; }
    });
    document.getElementById("bench").open = true;
    run().then(function () {
      var ignored = unknown.length ? "not datasets of this board: " + unknown.join(", ") : "";
      if (weights.length && weights.length !== asked.length) {
        ignored += (ignored ? "; " : "") + "the weights (" + weights.length + " for " + asked.length + " datasets)";
      }
      if (ignored) { status.textContent += " Ignored from the address: " + ignored + "."; }
    });
  }

  window.irboardBenchmark = { compute: compute, run: run, aggregate: aggregate, tSf: tSf, tQuantile: tUpperQuantile };
})();
