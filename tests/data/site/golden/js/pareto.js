/* The "tied for best" page: show the chosen group or dataset and cost, draw that chart (only that one: a board
   of thirty datasets has a hundred of them); the address keeps the choice as ?on=KEY&cost=COST. */
(function () {
  "use strict";
  var form = document.getElementById("pareto-form");
  if (!form || !window.irboardPlot) { return; }  /* without JavaScript every section shows, as a table */
  var on = document.getElementById("pareto-on"), cost = document.getElementById("pareto-cost");
  var sections = document.querySelectorAll("[data-choice]");

  function has(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }

  function show() {
    Array.prototype.forEach.call(sections, function (section) {
      var chosen = section.dataset.choice === on.value;
      section.hidden = !chosen;
      Array.prototype.forEach.call(section.querySelectorAll(".pareto-view"), function (view) {
        view.hidden = !chosen || view.dataset.cost !== cost.value;
        var plot = view.querySelector("[data-pareto-figure]");
        if (!view.hidden && plot && !plot.dataset.drawn) {
          plot.dataset.drawn = "1";
          var figure = JSON.parse(document.getElementById(plot.dataset.paretoFigure).textContent);
          window.irboardPlot(plot, figure.data, figure.layout);
        }
      });
    });
  }

  function remember() {
    var params = new URLSearchParams(window.location.search);
    params.set("on", on.value);
    params.set("cost", cost.value);
    try { window.history.replaceState(null, "", window.location.pathname + "?" + params.toString()); } catch (e) { /* file:// */ }
  }

  var params = new URLSearchParams(window.location.search);
  if (params.get("on") && has(on, params.get("on"))) { on.value = params.get("on"); }
  if (params.get("cost") && has(cost, params.get("cost"))) { cost.value = params.get("cost"); }
  form.hidden = false;
  [on, cost].forEach(function (select) { select.addEventListener("change", function () { show(); remember(); }); });
  show();
})();
