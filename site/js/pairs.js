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

  /* The size of the difference beside its p-value: paired mean difference with its t-interval (t975: the
     dataset's t quantile) and d_z = mean / SD of the per-query differences, as on the dataset pages. */
  function effectText(aValues, bValues, info, nameB, nameA, p) {
    var d = bValues.map(function (value, i) { return value - aValues[i]; });
    var m = mean(d), n = d.length;
    var sd = n > 1 ? Math.sqrt(d.reduce(function (sum, x) { return sum + (x - m) * (x - m); }, 0) / (n - 1)) : 0;
    var half = info.t975 * sd / Math.sqrt(n);
    var text = "Effect " + nameB + " − " + nameA + ": Δ " + (100 * m).toFixed(2) + " [" + (100 * (m - half)).toFixed(2) +
      ", " + (100 * (m + half)).toFixed(2) + "]";
    if (sd > 0) { text += ", d_z " + (m / sd).toFixed(2); }
    text += " (95% t-interval, not corrected for the number of pairs; the corrected p decides)";
    if (p >= info.alpha) { return text + ", not significant after correction."; }
    return text + (Math.abs(m) >= info.meaningful ? ", a meaningful difference." : ", significant but below the " +
      "meaningful difference of " + (100 * info.meaningful).toFixed(2) + ".");
  }

  window.irboardPairs = { loadModel: loadModel, mean: mean, formatP: formatP, effectText: effectText };

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
