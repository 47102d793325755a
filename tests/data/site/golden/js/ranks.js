/* Ranks page: one search box over every group's table (a board of 200 models makes the page tens of thousands of
   pixels tall). Every word typed must occur in a model's id; the rows of the other models are hidden, and the status
   line says how many models match. */
(function () {
  "use strict";
  var form = document.getElementById("rank-search");
  if (!form) { return; }
  var input = document.getElementById("rank-q"), status = document.getElementById("rank-status");
  var rows = Array.prototype.slice.call(document.querySelectorAll("table.results tbody tr[data-id]"));
  var total = {};
  rows.forEach(function (row) { total[row.dataset.id] = true; });

  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean), found = {};
    rows.forEach(function (row) {
      var id = row.dataset.id, shown = words.every(function (word) { return id.indexOf(word) !== -1; });
      row.hidden = !shown;
      if (shown) { found[id] = true; }
    });
    var count = Object.keys(found).length, all = Object.keys(total).length;
    status.textContent = words.length ? count + " of " + all + " model" + (all === 1 ? "" : "s") + " match." : "";
    var params = new URLSearchParams(window.location.search);
    if (input.value.trim()) { params.set("q", input.value.trim()); } else { params.delete("q"); }
    var query = params.toString();
    try {
      window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") +
                                  window.location.hash);
    } catch (error) { /* some file:// contexts refuse; the search still works */ }
  }

  input.value = new URLSearchParams(window.location.search).get("q") || "";
  form.hidden = false;
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  input.addEventListener("input", apply);
  apply();
})();
