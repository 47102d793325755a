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

  /* Whether `value` is one the address may set for `name`: a choice of its select, "1" for a checkbox. */
  function allowed(name, value) {
    var element = form.elements[name];
    if (name === "sort") { return Boolean(columns[value]); }
    if (name === "desc" || (element && element.type === "checkbox")) { return value === "1"; }
    if (element && element.tagName === "SELECT") {
      return Array.prototype.some.call(element.options, function (option) { return option.value === value; });
    }
    return true;
  }

  /* The view the address asks for; values it cannot show are dropped and listed in `ignored`, said once. */
  function readState() {
    var params = new URLSearchParams(window.location.search), state = {}, ignored = [];
    FIELDS.forEach(function (name) {
      var value = params.get(name) || "";
      if (value && !allowed(name, value)) {
        ignored.push(name + "=" + value);
        value = "";
      }
      state[name] = value;
    });
    if (state.view !== "rank") { state.view = "score"; }
    state.ignored = ignored;
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

  function visible(row, state, words) {
    var data = row.dataset;
    if (!words.every(function (word) { return data.id.indexOf(word) !== -1; })) { return false; }
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
    var shown = 0, words = state.q.toLowerCase().split(/\s+/).filter(Boolean);  /* every word must match */
    rows.forEach(function (row) {
      var show = visible(row, state, words);
      row.hidden = !show;
      if (show) { shown += 1; }
    });
    bodies.forEach(function (body) {  /* a group label without a visible row is hidden too */
      var label = body.querySelector("tr.group-label");
      if (label) { label.hidden = !body.querySelector("tr:not(.group-label):not([hidden])"); }
    });
    table.dataset.view = state.view;
    sortRows(state);
    status.textContent = "Showing " + shown + " of " + rows.length + " models." + (state.ignored && state.ignored.length ?
      " Ignored from the address (not a choice here): " + state.ignored.join(", ") + "." : "");
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

  /* "Download this view": the rows shown, in their order, with the columns of the current view; values as the
     table shows them (scores ×100), each header naming the full dataset id, metric and unit. */
  function csvField(value) {
    var text = value === null || value === undefined ? "" : String(value);
    return /[",\r\n]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
  }

  function viewCsv() {
    var hidden = state.view === "rank" ? "s" : "r";
    var keys = Object.keys(columns).filter(function (key) { return !columns[key].th.classList.contains(hidden); })
      .sort(function (a, b) { return columns[a].index - columns[b].index; });
    var names = { model: "model_id", type: "type", params: "parameters" };
    var lines = [keys.map(function (key) { return csvField(names[key] || columns[key].th.dataset.unit); }).join(",")];
    bodies.forEach(function (body) {  /* in the order shown: verified models first, each body as sorted */
      Array.prototype.forEach.call(body.rows, function (row) {
        if (row.hidden || row.classList.contains("group-label")) { return; }
        lines.push(keys.map(function (key) {
          return csvField(key === "model" ? row.querySelector("th a").textContent : cellValue(row, key));
        }).join(","));
      });
    });
    return lines.join("\r\n") + "\r\n";
  }

  var downloads = document.querySelector("p.downloads");
  if (downloads && window.Blob && window.URL) {
    var viewButton = document.createElement("button");
    viewButton.type = "button";
    viewButton.id = "download-view";
    viewButton.className = "link";
    viewButton.textContent = "this view (CSV: filters and sort applied, ×100 as shown)";
    viewButton.addEventListener("click", function () {
      var link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([viewCsv()], { type: "text/csv" }));
      link.download = "leaderboard-view.csv";
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
    });
    downloads.appendChild(document.createTextNode(" · "));
    downloads.appendChild(viewButton);
  }

  form.hidden = false;
  fillForm(state);
  /* The header row sticks while the table scrolls in its box; the second header row sits under the first. */
  function stickHeader() {
    var second = table.tHead.rows[1];
    if (!second) { return; }
    var top = table.tHead.rows[0].getBoundingClientRect().height;
    Array.prototype.forEach.call(second.cells, function (th) { th.style.top = top + "px"; });
  }
  stickHeader();
  window.addEventListener("resize", stickHeader);

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
