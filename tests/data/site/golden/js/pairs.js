/* Two models on one dataset: their corrected p-value and the size of their difference, from the per-model data
   files (data/models/<slug>.js: per-query values and corrected p-values against every model of each dataset).
   The files are loaded with <script> elements, which works from file:// as well as http. window.irboardPairs
   serves compare.js too; on a dataset page this file also runs the "any two models" lookup (#pair-form). */
(function () {
  "use strict";
  var loading = {};

  function loadModel(root, slug, id) {
    if (!loading[id]) {
      loading[id] = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = root + "data/models/" + slug + ".js";
        script.onload = function () { resolve(window.irboardData.models[id]); };
        script.onerror = function () { reject(new Error("cannot load the data of " + id)); };
        document.head.appendChild(script);
      });
    }
    return loading[id];
  }

  function mean(values) {
    return values.reduce(function (sum, value) { return sum + value; }, 0) / values.length;
  }

  /* Three decimals, or more where three would print alpha or cross it (the data rounds p away from alpha). */
  function formatP(p, alpha) {
    if (p < 0.001) { return "< 0.001"; }
    for (var digits = 3; digits < 8; digits += 1) {
      var text = p.toFixed(digits), shown = Number(text);
      if (shown !== alpha && (shown < alpha) === (p < alpha)) { return text; }
    }
    return String(p);
  }

  /* Student's t distribution (site/js/student_t.js, loaded before this file). */
  var studentT = window.irboardStudentT, tUpper = studentT.sf, tCdf = studentT.cdf;
  var tQuantileUpper = studentT.upperQuantile;

  /* The interval a corrected verdict rests on (leaderboard/analysis/verdicts.py): where the correction rejects, the
     t-interval at the level it tested the pair at, alpha × uncorrected p / corrected p; elsewhere Bonferroni's
     simultaneous interval (alpha / pairs). It excludes 0 exactly when p < alpha. */
  function verdictInterval(m, se, df, p, alpha, pairs) {
    if (!(se > 0)) { return [m, m]; }
    var raw = Math.min(1, 2 * tUpper(Math.abs(m) / se, Math.max(df, 1)));
    var level = p > 0 ? alpha * raw / p : alpha;
    if (!(p < alpha)) { level = Math.min(level, alpha / Math.max(pairs || 1, 1)); }  /* Bonferroni's simultaneous */
    level = Math.min(1, Math.max(level, 1e-300));
    var half = tQuantileUpper(level / 2, Math.max(df, 1)) * se;
    return [m - half, m + half];
  }

  /* Random-effects pooling of differences y with variances v (leaderboard/analysis/meta.py): Paule–Mandel tau²,
     interval of the mean (meanInterval), prediction interval for a new dataset (t, k − 2, with tau at its
     80% upper bound), both at 1 − alpha, and the probability that the difference there is above 0. chiQuantiles[df]: the 20% quantile
     of chi² with df degrees of freedom. */
  function pool(y, v, chiQuantiles, alpha) {
    alpha = alpha || 0.05;  /* the build's settings.tests.alpha: intervals at 1 − alpha */
    var k = y.length;
    if (k === 1) { return { k: 1, mean: y[0], ci: null, tau: 0, prediction: null, pBeats: null, se: null }; }
    var floor = Math.max(Math.max.apply(null, v), 1e-300) * 1e-12;
    v = v.map(function (x) { return Math.max(x, floor); });
    function weighted(tau2) {
      var w = v.map(function (x) { return 1 / (x + tau2); }), sw = w.reduce(function (s, x) { return s + x; }, 0);
      var mu = w.reduce(function (s, x, i) { return s + x * y[i]; }, 0) / sw;
      var q = w.reduce(function (s, x, i) { return s + x * (y[i] - mu) * (y[i] - mu); }, 0);
      return { mu: mu, q: q, sw: sw };
    }
    function solve(target) {  /* tau² where Q equals the target (0 if Q is below it already) */
      if (weighted(0).q <= target) { return 0; }
      var low = 0, high = Math.max(y.reduce(function (s, x) { return s + x * x; }, 0), floor);
      while (weighted(high).q > target) { high *= 2; }
      for (var i = 0; i < 200 && high - low > 1e-14 * high; i += 1) {
        var middle = (low + high) / 2;
        if (weighted(middle).q > target) { low = middle; } else { high = middle; }
      }
      return (low + high) / 2;
    }
    var tau2 = solve(k - 1);
    var fit = weighted(tau2), plain = 1 / fit.sw, hk = Math.max(fit.q / (k - 1), 1) * plain;  /* q floored at 1 */
    var plainMean = mean(y), plainSe = Math.sqrt(y.reduce(function (s, x) { return s + (x - plainMean) * (x - plainMean); }, 0) /
      (k - 1) / k);
    var result = { k: k, mean: fit.mu, ci: null, tau: Math.sqrt(tau2), prediction: null, pBeats: null,
      se: Math.sqrt(hk), plainMean: plainMean, plainSe: plainSe };
    result.ci = meanInterval(result, alpha);
    if (k >= 3) {
      /* tau at its 80% upper Q-profile bound (Q = the 20% quantile of chi² with k − 1 df, from the data file) */
      var scale = Math.sqrt(solve(chiQuantiles[k - 1]) + Math.max(plain, hk)), spread = tQuantileUpper(alpha / 2, k - 2) * scale;
      result.prediction = [fit.mu - spread, fit.mu + spread];
      result.pBeats = scale > 0 ? tCdf(fit.mu / scale, k - 2) : (fit.mu > 0 ? 1 : 0);
    }
    return result;
  }

  /* The interval of the pooled mean at 1 − alpha (meta.mean_interval): the hull of the modified Hartung–Knapp
     interval and the t-interval of the unweighted mean of the units, t with k − 1 degrees of freedom. */
  function meanInterval(fit, alpha) {
    var t = tQuantileUpper(alpha / 2, fit.k - 1);
    return [Math.min(fit.mean - t * fit.se, fit.plainMean - t * fit.plainSe),
      Math.max(fit.mean + t * fit.se, fit.plainMean + t * fit.plainSe)];
  }

  /* Equivalence of a pooled difference (meta.equivalence): its interval at Bonferroni's level alpha / pairs and
     whether it lies within ± margin, never below minUnits units (withheld: meta.equivalence_withheld); null with
     one unit. */
  function poolEquivalence(fit, alpha, pairs, margin, minUnits) {
    if (fit.se === null) { return null; }
    var interval = meanInterval(fit, alpha / Math.max(pairs || 1, 1)), low = interval[0], high = interval[1];
    var withheld = fit.k < (minUnits || 0);
    return { interval: interval, equivalent: !withheld && low > -margin && high < margin, withheld: withheld };
  }

  /* Paired differences b − a: their mean, SD (n − 1) and count. */
  function differences(aValues, bValues) {
    var d = bValues.map(function (value, i) { return value - aValues[i]; });
    var m = mean(d), n = d.length;
    var sd = n > 1 ? Math.sqrt(d.reduce(function (sum, x) { return sum + (x - m) * (x - m); }, 0) / (n - 1)) : 0;
    return { d: d, mean: m, sd: sd, n: n };
  }

  function range(interval) {
    return "[" + (100 * interval[0]).toFixed(2) + ", " + (100 * interval[1]).toFixed(2) + "]";
  }

  /* The size of the difference beside its p-value: paired mean difference with the interval its corrected verdict
     rests on and d_z = mean / SD of the per-query differences, as on the dataset pages. */
  function effectText(aValues, bValues, info, nameB, nameA, p) {
    var pair = differences(aValues, bValues), m = pair.mean, sd = pair.sd, n = pair.n;
    var interval = verdictInterval(m, n > 1 ? sd / Math.sqrt(n) : 0, n - 1, p, info.alpha, info.pairs);
    var text = "Effect " + nameB + " − " + nameA + ": Δ " + (100 * m).toFixed(2) + " " + range(interval);
    if (sd > 0) { text += ", d_z " + (m / sd).toFixed(2); }
    text += " (the interval of the corrected verdict: it excludes 0 exactly when the corrected p is below α)";
    if (p >= info.alpha) { return text + ", not significant after correction."; }
    return text + (Math.abs(m) >= info.meaningful ? ", a meaningful difference." : ", significant but below the " +
      "meaningful difference of " + (100 * info.meaningful).toFixed(2) + ".");
  }

  window.irboardPairs = { loadModel: loadModel, mean: mean, formatP: formatP, effectText: effectText,
    verdictInterval: verdictInterval, pool: pool, poolEquivalence: poolEquivalence, differences: differences, range: range, tQuantileUpper: tQuantileUpper };

  /* Dataset page: any two of its models, typed or picked from the list. */
  var form = document.getElementById("pair-form");
  var source = document.getElementById("pair-data");
  if (!form || !source) { return; }
  var info = JSON.parse(source.textContent);
  var result = document.getElementById("pair-result");
  var inputs = [form.elements.a, form.elements.b];
  var index = {};
  info.models.forEach(function (id, i) { index[id.toLowerCase()] = i; });
  var options = document.createDocumentFragment();
  info.models.forEach(function (id) {
    var option = document.createElement("option");
    option.value = id;
    options.appendChild(option);
  });
  document.getElementById("pair-models").appendChild(options);

  function show(remember) {
    var picked = inputs.map(function (input) { return index[input.value.trim().toLowerCase()]; });
    var missing = inputs.filter(function (input, k) { return picked[k] === undefined; });
    if (missing.length) {
      result.textContent = "No model named “" + missing[0].value.trim() + "” on " + info.dataset +
        ": pick one from the list.";
      return;
    }
    var a = info.models[picked[0]], b = info.models[picked[1]];
    if (a === b) { result.textContent = "Pick two different models."; return; }
    if (remember) {  /* a pair the visitor picked becomes shareable; the page's default pair leaves the address alone */
      var params = new URLSearchParams(window.location.search);  /* table.js keeps these */
      params.set("pa", a);
      params.set("pb", b);
      try { window.history.replaceState(null, "", window.location.pathname + "?" + params.toString()); } catch (e) { /* file:// */ }
    }
    result.textContent = "Loading…";
    Promise.all([loadModel(info.root, info.slugs[picked[0]], a), loadModel(info.root, info.slugs[picked[1]], b)])
      .then(function (pair) {
        var first = pair[0][info.dataset], second = pair[1][info.dataset];
        if (inputs[0].value.trim().toLowerCase() !== a.toLowerCase() ||
            inputs[1].value.trim().toLowerCase() !== b.toLowerCase()) { return; }  /* changed meanwhile */
        result.textContent = info.metric + " ×100: " + a + " " + (100 * mean(first.values)).toFixed(2) + ", " + b + " " +
          (100 * mean(second.values)).toFixed(2) + ". Corrected p = " + formatP(first.p[picked[1]], info.alpha) + ". " +
          effectText(first.values, second.values, info, b, a, first.p[picked[1]]);
      }, function (error) { result.textContent = error.message; });
  }

  var params = new URLSearchParams(window.location.search);
  inputs[0].value = params.get("pa") || info.models[0] || "";
  inputs[1].value = params.get("pb") || info.models[1] || "";
  form.hidden = false;
  form.addEventListener("submit", function (event) { event.preventDefault(); show(true); });
  form.addEventListener("change", function () { show(true); });
  if (info.models.length > 1) { show(false); }
})();
