/* Draw every figure of the page from its JSON block with the bundled plotly.js, in the page's colours
   (the dark theme follows the system setting, as site.css does). window.irboardPlot draws one more. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var plots = document.querySelectorAll("[data-figure]");
  if (!window.Plotly) {
    document.documentElement.classList.remove("js");  /* shows the "needs JavaScript" notes */
    return;
  }
  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;

  /* Figures are written for a white page: on a dark one, text, grid and error bars take the theme's colours. */
  function themed(data, layout) {
    if (!dark) { return; }
    var style = window.getComputedStyle(document.documentElement);
    var text = style.getPropertyValue("--text").trim(), grid = style.getPropertyValue("--row").trim();
    layout.paper_bgcolor = layout.plot_bgcolor = style.getPropertyValue("--bg").trim();
    layout.font = Object.assign({}, layout.font, { color: text });
    Object.keys(layout).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) {
        layout[key] = Object.assign({ gridcolor: grid, zerolinecolor: grid, linecolor: grid }, layout[key],
                                    { gridcolor: grid });
      }
    });
    data.forEach(function (trace) {
      if (trace.error_y) { trace.error_y.color = text; }
      if (trace.error_x) { trace.error_x.color = text; }
    });
  }

  /* Plots fill their box and follow its width when the window (or a phone's orientation) changes. */
  window.irboardPlot = function (div, data, layout) {
    themed(data, layout);
    if (div.clientWidth < 560 && layout.title) {  /* a phone: the caption under the chart names it instead */
      layout.title = { text: "" };
      layout.margin = Object.assign({}, layout.margin, { t: 30 });
    }
    delete layout.width;
    layout.autosize = true;
    return window.Plotly.newPlot(div, data, layout, { responsive: true, displaylogo: false });
  };

  Array.prototype.forEach.call(plots, function (div) {
    var figure = JSON.parse(document.getElementById(div.dataset.figure).textContent);
    window.irboardPlot(div, figure.data, figure.layout);
  });
})();
