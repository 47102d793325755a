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
    /* the page's dark blue and near-black become the theme's accent and text; other colours keep their meaning */
    var swap = { "#1f5fa8": style.getPropertyValue("--accent").trim(), "#1f2328": text, "#57606a": text };
    function recolour(value) {
      if (Array.isArray(value)) { return value.map(recolour); }
      return typeof value === "string" && swap[value.toLowerCase()] ? swap[value.toLowerCase()] : value;
    }
    data.forEach(function (trace) {
      ["marker", "line", "error_x", "error_y"].forEach(function (part) {
        if (trace[part] && trace[part].color) { trace[part].color = recolour(trace[part].color); }
      });
      if (trace.marker && trace.marker.line && trace.marker.line.color) {
        trace.marker.line.color = recolour(trace.marker.line.color);
      }
    });
  }

  var touch = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;

  /* A phone: the legend goes under the plot, below the axis title (it is placed against the bottom of the chart and
     the chart grows by a line per entry, so the plot keeps its height); dragging scrolls the page instead of
     zooming; no toolbar over the legend. Every axis makes room for its labels (automargin). */
  var LABEL = 18;  /* characters of a category label on a phone; the hover text keeps the whole name */

  function shortLabels(axis, values) {
    if (!values || !values.some(function (v) { return String(v).length > LABEL; })) { return; }
    axis.tickmode = "array";
    axis.tickvals = values;
    axis.ticktext = values.map(function (v) { v = String(v); return v.length > LABEL ? v.slice(0, LABEL - 1) + "…" : v; });
  }

  function narrowed(div, data, layout) {
    var entries = data.filter(function (trace) { return trace.showlegend !== false; }).length;
    if (entries > 1 && layout.showlegend !== false) {
      layout.legend = Object.assign({}, layout.legend, { orientation: "h", x: 0.5, xanchor: "center",
                                                          y: 0, yanchor: "bottom", yref: "container" });
      layout.height = (layout.height || 400) + 22 * entries;
    }
    data.forEach(function (trace) {
      if (trace.type === "heatmap") {  /* the colour scale under the map, not beside it: the map keeps the width */
        var bar = trace.colorbar || {};
        trace.colorbar = Object.assign({}, bar, { orientation: "h", x: 0.5, xanchor: "center",
          y: 0, yanchor: "bottom", yref: "container", thickness: 14, len: 1, tickfont: { size: 11 },
          tickangle: 0, title: { text: "p", side: "right" },
          ticktext: (bar.ticktext || []).map(function (text) { return String(text).split(":")[0].replace(/^p /, "").replace(" 0.", " .").replace(" ", ""); }) });
        /* the map is square (as wide as the phone): no more height than it, its labels and the scale need */
        layout.height = Math.min((layout.height || 400) + 90, div.clientWidth + 30);
      }
      ["x", "y"].forEach(function (letter) {
        var axis = layout[letter + "axis"];
        if (axis && axis.type === "category") { shortLabels(axis, trace[letter]); }
      });
    });
  }

  /* Plots fill their box and follow its width when the window (or a phone's orientation) changes. */
  window.irboardPlot = function (div, data, layout) {
    themed(data, layout);
    var narrow = div.clientWidth < 560;
    if (narrow && layout.title) {  /* a phone: the caption under the chart names it instead */
      layout.title = { text: "" };
      layout.margin = Object.assign({}, layout.margin, { t: 30 });
    }
    if (narrow) { narrowed(div, data, layout); }
    layout.xaxis = layout.xaxis || {};
    layout.yaxis = layout.yaxis || {};
    Object.keys(layout).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) {
        layout[key] = Object.assign({ automargin: true }, layout[key], (narrow || touch) ? { fixedrange: true } : {});
      }
    });
    if (narrow || touch) { layout.dragmode = false; }
    delete layout.width;
    layout.autosize = true;
    return window.Plotly.newPlot(div, data, layout, {
      responsive: true, displaylogo: false, displayModeBar: (narrow || touch) ? false : "hover",
      scrollZoom: false
    });
  };

  /* Per-model charts (figure.rows) show the top N models: every array of one value per model keeps its last N
     (Plotly draws the first category at the bottom, so the best come last), the height follows N, and the title
     and caption say how many are shown. The select #top-n picks N; the address keeps it as top=N. */
  function keepLast(value, count, n, depth) {
    if (Array.isArray(value)) { return value.length === count ? value.slice(count - n) : value; }
    if (value && typeof value === "object" && depth < 3) {
      var copy = {};
      Object.keys(value).forEach(function (key) { copy[key] = keepLast(value[key], count, n, depth + 1); });
      return copy;
    }
    return value;
  }

  function shownText(n, count) {
    return n < count ? "top " + n + " of " + count.toLocaleString("en") + " models" :
      "all " + count.toLocaleString("en") + " models";
  }

  function draw(div, n) {
    var figure = JSON.parse(document.getElementById(div.dataset.figure).textContent);
    var rows = figure.rows, data = figure.data, layout = figure.layout;
    if (rows) {
      n = Math.min(n || rows.count, rows.count);
      data = data.map(function (trace) { return keepLast(trace, rows.count, n, 0); });
      layout.height = rows.base + rows.px * n;
      layout.title.text += " — " + shownText(n, rows.count);
      var note = div.parentNode.querySelector(".top-note");
      if (note) { note.textContent = " (" + shownText(n, rows.count) + ")"; }
    }
    window.irboardPlot(div, data, layout);
  }

  var select = document.getElementById("top-n");
  function chosen() {
    if (!select) { return 0; }
    var wanted = new URLSearchParams(window.location.search).get("top");
    if (wanted && Array.prototype.some.call(select.options, function (o) { return o.value === wanted; })) {
      select.value = wanted;
    }
    return Number(select.value);
  }
  /* Charts are drawn when they come near the screen (IntersectionObserver): a page of thirty charts drawn at once
     blocked for seconds. Without the observer (an old browser), all are drawn at once. */
  var observer = window.IntersectionObserver ? new window.IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) { observer.unobserve(entry.target); drawNow(entry.target); }
    });
  }, { rootMargin: "300px 0px" }) : null;

  function drawNow(div) {
    div.dataset.drawn = "1";
    if (div.dataset.figureChoice) { drawChosen(div); } else { draw(div, top); }
  }

  function later(div) {
    if (observer) { observer.observe(div); } else { drawNow(div); }
  }

  /* One chart for many datasets (a model page's recall at scale): the select named by data-figure-choice picks
     which figure (a JSON block id) the chart shows; the caption follows. */
  function drawChosen(div) {
    var select = document.getElementById(div.dataset.figureChoice);
    var figure = JSON.parse(document.getElementById(select.value).textContent);
    var caption = div.parentNode.querySelector(".choice-title");
    if (caption) { caption.textContent = select.options[select.selectedIndex].dataset.title; }
    window.irboardPlot(div, figure.data, figure.layout);
  }

  Array.prototype.forEach.call(document.querySelectorAll("[data-figure-choice]"), function (div) {
    var select = document.getElementById(div.dataset.figureChoice);
    select.form.hidden = false;
    select.addEventListener("change", function () { if (div.dataset.drawn) { drawChosen(div); } });
    later(div);
  });

  var top = chosen();
  Array.prototype.forEach.call(plots, later);
  if (select) {
    select.form.hidden = false;
    select.addEventListener("change", function () {
      top = Number(select.value);
      Array.prototype.forEach.call(plots, function (div) {
        /* the per-model charts; one not drawn yet takes the new N when it comes into view */
        if (div.dataset.drawn && div.parentNode.querySelector(".top-note")) { draw(div, top); }
      });
      var params = new URLSearchParams(window.location.search);
      params.set("top", select.value);
      try { window.history.replaceState(null, "", window.location.pathname + "?" + params.toString()); } catch (e) { /* file:// */ }
    });
  }
})();
