/* Home table: filter, search and sort the server-rendered rows; the view's state lives in the URL.
   Verified and unverified models sit in two table bodies: each is sorted on its own, so they never mix. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var table = document.getElementById("board");
  var form = document.getElementById("filters");
  var status = document.getElementById("status");
  if (!table || !form) { return; }
  var bodies = Array.prototype.slice.call(table.tBodies);
  var rows = [];
  bodies.forEach(function (body) {
    Array.prototype.forEach.call(body.rows, function (row) {
      if (!row.classList.contains("group-label")) { rows.push(row); }
    });
  });
  rows.forEach(function (row, index) { row.dataset.order = String(index); });
  var FIELDS = ["q", "type", "maxparams", "license", "open", "zeroshot", "verified", "view", "sort", "desc"];
  var TEXT_KEYS = { model: true, type: true };

  /* Column index of every sortable header, honouring rowspan and colspan. */
  function headerColumns() {
    var taken = [], columns = {};
    Array.prototype.forEach.call(table.tHead.rows, function (row, r) {
      var c = 0;
      taken[r] = taken[r] || [];
      Array.prototype.forEach.call(row.cells, function (cell) {
        while (taken[r][c]) { c += 1; }
        for (var dr = 0; dr < cell.rowSpan; dr += 1) {
          taken[r + dr] = taken[r + dr] || [];
          for (var dc = 0; dc < cell.colSpan; dc += 1) { taken[r + dr][c + dc] = true; }
        }
        if (cell.dataset.key) { columns[cell.dataset.key] = { index: c, th: cell }; }
        c += cell.colSpan;
      });
    });
    return columns;
  }
  var columns = headerColumns();

  function readState() {
    var params = new URLSearchParams(window.location.search), state = {};
    FIELDS.forEach(function (name) { state[name] = params.get(name) || ""; });
    if (state.sort && !columns[state.sort]) { state.sort = ""; }
    if (state.view !== "rank") { state.view = "score"; }
    return state;
  }

  function writeState(state) {
    var params = new URLSearchParams();
    FIELDS.forEach(function (name) {
      var value = state[name];
      if (value && !(name === "view" && value === "score")) { params.set(name, value); }
    });
    var query = params.toString();
    try {
      window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : ""));
    } catch (error) { /* some file:// contexts refuse; the view still works */ }
  }

  function stateFromForm(state) {
    var next = { sort: state.sort, desc: state.desc };
    ["q", "type", "maxparams", "license", "view"].forEach(function (name) {
      next[name] = form.elements[name].value.trim();
    });
    ["open", "zeroshot", "verified"].forEach(function (name) {
      next[name] = form.elements[name].checked ? "1" : "";
    });
    return next;
  }

  function fillForm(state) {
    ["q", "type", "maxparams", "license", "view"].forEach(function (name) {
      var element = form.elements[name];
      element.value = state[name];
      if (element.tagName === "SELECT" && element.value !== state[name]) { element.value = ""; }
    });
    ["open", "zeroshot", "verified"].forEach(function (name) { form.elements[name].checked = state[name] === "1"; });
  }

  function visible(row, state) {
    var data = row.dataset;
    if (state.q && data.id.indexOf(state.q.toLowerCase()) === -1) { return false; }
    if (state.type && data.type !== state.type) { return false; }
    if (state.license && data.license !== state.license) { return false; }
    if (state.maxparams && (data.params === "" || Number(data.params) > Number(state.maxparams))) { return false; }
    if (state.open && data.open !== "1") { return false; }
    if (state.zeroshot && data.zs !== "1") { return false; }
    if (state.verified && data.ver !== "1") { return false; }
    return true;
  }

  function cellValue(row, key) {
    var cell = row.cells[columns[key].index];
    if (TEXT_KEYS[key]) { return cell.textContent.trim().toLowerCase(); }
    if (cell.dataset.v !== undefined) { return cell.dataset.v === "" ? null : Number(cell.dataset.v); }
    var number = parseFloat(cell.textContent);
    return isNaN(number) ? null : number;
  }

  function sortRows(state) {
    var ordered = rows.slice();
    if (state.sort) {
      var key = state.sort, sign = state.desc === "1" ? -1 : 1;
      var values = new Map(rows.map(function (row) { return [row, cellValue(row, key)]; }));
      ordered.sort(function (a, b) {
        var x = values.get(a), y = values.get(b);
        if (x === null || y === null) {
          if (x === y) { return Number(a.dataset.order) - Number(b.dataset.order); }
          return x === null ? 1 : -1;  /* missing values last in both directions */
        }
        if (x < y) { return -sign; }
        if (x > y) { return sign; }
        return Number(a.dataset.order) - Number(b.dataset.order);
      });
    }
    bodies.forEach(function (body) {
      var fragment = document.createDocumentFragment();
      ordered.forEach(function (row) { if (row.parentNode === body) { fragment.appendChild(row); } });
      body.appendChild(fragment);
    });
    Object.keys(columns).forEach(function (key) {
      var th = columns[key].th;
      if (key === state.sort) {
        th.setAttribute("aria-sort", state.desc === "1" ? "descending" : "ascending");
      } else {
        th.removeAttribute("aria-sort");
      }
    });
  }

  var state = readState();

  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var show = visible(row, state);
      row.hidden = !show;
      if (show) { shown += 1; }
    });
    bodies.forEach(function (body) {  /* a group label without a visible row is hidden too */
      var label = body.querySelector("tr.group-label");
      if (label) { label.hidden = !body.querySelector("tr:not(.group-label):not([hidden])"); }
    });
    table.dataset.view = state.view;
    sortRows(state);
    status.textContent = "Showing " + shown + " of " + rows.length + " models.";
    writeState(state);
  }

  Object.keys(columns).forEach(function (key) {
    var th = columns[key].th;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    var link = th.querySelector("a");
    if (link) {
      button.setAttribute("aria-label", "Sort by " + link.textContent);
      th.appendChild(document.createTextNode(" "));
      th.appendChild(button);
    } else {
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
    }
    button.addEventListener("click", function () {
      if (state.sort === key) {
        state.desc = state.desc === "1" ? "" : "1";
      } else {
        state.sort = key;
        state.desc = TEXT_KEYS[key] || key.indexOf("r-") === 0 ? "" : "1";  /* scores: best first */
      }
      apply();
    });
  });

  form.hidden = false;
  fillForm(state);
  form.addEventListener("input", function () { state = stateFromForm(state); apply(); });
  form.addEventListener("change", function () { state = stateFromForm(state); apply(); });
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("reset", function (event) {
    event.preventDefault();
    state = { q: "", type: "", maxparams: "", license: "", open: "", zeroshot: "", verified: "", view: "score",
              sort: "", desc: "" };
    fillForm(state);
    apply();
  });
  apply();
})();
