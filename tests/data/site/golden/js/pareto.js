/* The "could be #1" pages, one per group mean and dataset: the datasets picker opens another's page (keeping
   the cost), the cost picker shows that cost's chart and draws it; the address keeps the cost as ?cost=COST. */
(function () {
  "use strict";
  var form = document.getElementById("pareto-form");
  if (!form || !window.irboardPlot) { return; }  /* without JavaScript every cost's chart note and the table show */
  var on = document.getElementById("pareto-on"), cost = document.getElementById("pareto-cost");

  function show() {
    Array.prototype.forEach.call(document.querySelectorAll(".pareto-view"), function (view) {
      view.hidden = view.dataset.cost !== cost.value;
      var plot = view.querySelector("[data-pareto-figure]");
      if (!view.hidden && plot && !plot.dataset.drawn) {
        plot.dataset.drawn = "1";
        var figure = JSON.parse(document.getElementById(plot.dataset.paretoFigure).textContent);
        window.irboardPlot(plot, figure.data, figure.layout);
      }
    });
  }

  var wanted = new URLSearchParams(window.location.search).get("cost");
  if (wanted && Array.prototype.some.call(cost.options, function (o) { return o.value === wanted; })) {
    cost.value = wanted;
  }
  form.hidden = false;
  on.addEventListener("change", function () { window.location.href = on.value + "?cost=" + encodeURIComponent(cost.value); });
  cost.addEventListener("change", function () {
    show();
    try { window.history.replaceState(null, "", window.location.pathname + "?cost=" + encodeURIComponent(cost.value)); } catch (e) { /* file:// */ }
  });
  show();
})();
