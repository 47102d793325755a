/* Draw every figure of the page from its JSON block with the bundled plotly.js. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var plots = document.querySelectorAll("[data-figure]");
  if (!window.Plotly) {
    document.documentElement.classList.remove("js");  /* shows the "needs JavaScript" notes */
    return;
  }
  Array.prototype.forEach.call(plots, function (div) {
    var figure = JSON.parse(document.getElementById(div.dataset.figure).textContent);
    window.Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
  });
})();
