/* Home page: the whole leaderboard (every model, every dataset column) from data/board.js, which <script src>
   loads from file:// as well as http. The page's own HTML holds the top rows and the group means, shown before
   any script runs; table.js takes the rows from window.irboardBoard, sorts and filters them as data and builds
   the elements of the rows it shows. */
(function () {
  "use strict";

  function escape(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  var UNVERIFIED = "<span class=\"unv\" title=\"not re-scored from a stored ranking\">*</span>" +
    "<span class=\"sr\"> (not re-scored)</span>";
  var UNCHECKED = "<span class=\"unv\" title=\"not checked: its score samples were not checked against a stored " +
    "ranking\">*</span><span class=\"sr\"> (not checked)</span>";  /* a prediction: templates/_macros.html */

  /* templates/_macros.html, cost_source(): who measured a model's parameter count */
  var MEASURED = " <small class=\"measured\" title=\"read from the model by irboard in CI while reproducing\">measured</small>";
  var CLAIMED = " <small class=\"claimed\" title=\"claimed by the result files, not measured by irboard\">claimed</small>";

  var TIER_TITLES = {  /* templates/_macros.html, tier() */
    "self-reported": "self-reported: nothing re-scored, values as submitted",
    "re-scored": "re-scored: every metric recomputed from the stored ranking against the official judgments",
    "reproduced": "reproduced: re-scored, and CI obtained the same ranking by running the declared artifact again"
  };

  /* One row of data/board.js as the HTML that templates/_board.html writes, plus the dataset cells (the layout
     of a row: leaderboard/web/board_data.py). */
  function rowHtml(row) {
    var flags = row[6], params = row[3] === null ? "" : String(row[3]);
    var html = ["<tr data-id=\"", escape(row[0].toLowerCase()), "\" data-type=\"", escape(row[2]),
      "\" data-params=\"", params, "\" data-license=\"", escape(row[5]), "\" data-open=\"",
      flags.indexOf("o") !== -1 ? 1 : 0, "\" data-zs=\"", flags.indexOf("z") !== -1 ? 1 : 0, "\" data-ver=\"",
      flags.indexOf("v") !== -1 ? 1 : 0, "\" data-tier=\"", escape(row[10]), "\"><th scope=\"row\"><a href=\"",
      escape(row[1]), "\">", escape(row[0]), "</a>", flags.indexOf("b") !== -1 ? " <span class=\"tag\">baseline</span>" : "",
      " <span class=\"tag tier-", escape(row[10]), "\" title=\"", escape(TIER_TITLES[row[10]]), "\">", escape(row[10]),
      "</span>",
      "</th><td>", escape(row[2]), "</td><td data-v=\"", params, "\">", escape(row[4]),
      row[3] === null ? "" : flags.indexOf("m") !== -1 ? MEASURED : CLAIMED, "</td>"];
    row[7].forEach(function (cell) {
      if (typeof cell === "string") {  /* partial coverage */
        html.push("<td class=\"s part\" data-v=\"\">", escape(cell), "</td><td class=\"r part\" data-v=\"\">", escape(cell),
                  "</td>");
      } else {
        html.push("<td class=\"s\">", escape(cell[0]), " <small>", escape(cell[1]), "</small>",
                  cell[3] === null ? "" : " <small class=\"rk\" title=\"rank range from corrected pairwise tests" +
                  (cell[4] ? "; ★ top group: no ranked model significantly better" : "") + "\">rank " + escape(cell[3]) + (cell[4] ? " ★" : "") +
                  "</small>", "</td>",
                  cell[2] === null ? "<td class=\"r part\" data-v=\"\">–</td>" : "<td class=\"r\">" + escape(cell[2]) + "</td>");
      }
    });
    if (row[8]) {
      var unchecked = row[8][0].slice(-1) === "*";
      html.push(row[8][1] ? "<td class=\"pred part\" data-v=\"\">" : "<td class=\"pred\">",
                escape(unchecked ? row[8][0].slice(0, -1) : row[8][0]), unchecked ? UNCHECKED : "", "</td>");
    }
    row[9].forEach(function (cell) {
      var best = cell.charAt(0) === "!", unverified = cell.slice(-1) === "*";
      var text = cell.slice(best ? 1 : 0, unverified ? -1 : undefined);
      html.push(best ? "<td class=\"top\">" : "<td>", escape(text), unverified ? UNVERIFIED : "", "</td>");
    });
    html.push("</tr>");
    return html.join("");
  }

  function number(text) {
    var value = parseFloat(text);
    return isNaN(value) ? null : value;
  }

  /* The sort value of cell `index` of a row, as table.js reads it from a built row (data-v where the cell has one,
     else the number it starts with; text columns lower-cased), without building the row. */
  function value(row, index) {
    var groups = row[7].length, at = index - 3;
    if (index === 0) { return row[0].toLowerCase(); }
    if (index === 1) { return row[2].toLowerCase(); }
    if (index === 2) { return row[3]; }
    if (at < 2 * groups) {
      var cell = row[7][Math.floor(at / 2)];
      if (typeof cell === "string") { return null; }
      return number(at % 2 ? cell[2] : cell[0]);
    }
    at -= 2 * groups;
    if (row[8]) {
      if (at === 0) { return row[8][1] ? null : number(row[8][0]); }
      at -= 1;
    }
    return number(row[9][at].replace(/^!/, ""));
  }

  /* What cell `index` of a row says about being best there: its mean (null: none), whether it is in the top group
     (★ of a group mean, bold of a dataset value) and its rank range as shown; null for a column without scores. */
  function verdict(row, index) {
    var groups = row[7].length, at = index - 3;
    if (at < 0) { return null; }
    if (at < 2 * groups) {
      var cell = row[7][Math.floor(at / 2)];
      return typeof cell === "string" ? { mean: null } : { mean: number(cell[0]), top: Boolean(cell[4]), rank: cell[3] };
    }
    at -= 2 * groups + (row[8] ? 1 : 0);
    if (at < 0) { return null; }
    return { mean: number(row[9][at].replace(/^!/, "")), top: row[9][at].charAt(0) === "!", rank: null };
  }

  function names(records) {
    var ids = records.slice(0, 5).map(function (record) { return record.id; }).join(", ");
    return ids + (records.length > 5 ? " and " + (records.length - 5) + " more" : "");
  }

  /* The sentence above the table: which of the models the view shows are best on the column it is sorted by (the
     mean the page is ordered by when the sort is not a score), from the same verdicts as the ★ and the bold, and
     how many they are of all the ranked models (the tests are over all of them: a filter hides models, it does not
     change which are significantly better). Rules as pages.best_answer writes the page's own sentence. */
  function answer(shown, key, columns, all) {
    var target = document.getElementById("answer-text"), form = document.getElementById("filters");
    if (!target) { return; }
    if (!columns[key] || !columns[key].th.dataset.where) { key = form && form.dataset.sort; }
    if (!key || !columns[key]) { return; }
    var index = columns[key].index, where = columns[key].th.dataset.where, dataset = key.indexOf("d-") === 0;
    function scored(records) {
      return records.filter(function (record) {
        var seen = record.verdict(index);
        return seen && seen.mean !== null && (dataset || seen.rank !== null);  /* a group: ranked there */
      });
    }
    var everyone = scored(all), seen = scored(shown), filtered = shown.length < all.length;
    var tops = seen.filter(function (record) { return record.verdict(index).top; });
    var text;
    if (dataset) {
      var bold = "bold: no verified model is significantly better on that dataset";
      if (!tops.length) {
        text = seen.length ? "None of the shown models is in the top group on " + where + " (" + bold + "); the " +
          "highest shown score is " + seen.slice().sort(function (a, b) {
            return b.verdict(index).mean - a.verdict(index).mean; })[0].id + "'s." :
          "No shown model has a result on " + where + ".";
      } else {
        text = "Best on " + where + (filtered ? " among the shown models" : "") + ": " + names(tops) + " (" + bold + ").";
      }
    } else if (!everyone.length) {
      text = "No model is ranked on " + where + ": none has a verified result on every one of its datasets, so the " +
        "table cannot say which is best.";
    } else if (!filtered) {
      text = tops.length === 1 ?
        "Best on " + where + ": " + tops[0].id + ", the only ranked model that no other is significantly better " +
        "than (rank range from 1; the corrected pairwise tests of " + everyone.length + " ranked models)." :
        "Best on " + where + ": " + tops.length + " of " + everyone.length + " ranked models are tied for best (★: " +
        "no ranked model is significantly better, so each rank range starts at 1): " + names(tops) + ". The rank " +
        "range beside each mean says how sure its place is.";
    } else if (!seen.length) {
      text = "None of the shown models is ranked on " + where + " (" + everyone.length + " ranked models in all).";
    } else if (tops.length) {
      text = "Best on " + where + " among the " + seen.length + " shown ranked model" + (seen.length === 1 ? "" : "s") +
        ": " + tops.length + " of them " + (tops.length === 1 ? "is" : "are") + " in the top group of all " +
        everyone.length + " ranked models (★: no ranked model is significantly better): " + names(tops) + ".";
    } else {
      var best = seen.slice().sort(function (a, b) { return b.verdict(index).mean - a.verdict(index).mean; })[0];
      text = "None of the " + seen.length + " shown ranked model" + (seen.length === 1 ? " is" : "s is") + " in the " +
        "top group on " + where + " (★: no ranked model significantly better, of all " + everyone.length + "); the " +
        "highest shown mean is " + best.id + "'s (rank range " + best.verdict(index).rank + ").";
    }
    if (target.textContent !== text) { target.textContent = text; }
  }

  /* One row as table.js handles it: what the filters read, its table body, its sort values, and its element,
     built from rowHtml when it is first shown (a long board shows one page of rows at a time). */
  function record(row) {
    var flags = row[6];
    return {
      props: { id: row[0].toLowerCase(), type: row[2], params: row[3] === null ? "" : String(row[3]), license: row[5],
               open: flags.indexOf("o") !== -1 ? "1" : "0", zs: flags.indexOf("z") !== -1 ? "1" : "0",
               ver: flags.indexOf("v") !== -1 ? "1" : "0", tier: row[10] },
      ranked: flags.indexOf("v") !== -1,
      id: row[0],
      verdict: function (index) { return verdict(row, index); },
      node: null,
      html: function () { return rowHtml(row); },
      value: function (index) { return value(row, index); }
    };
  }

  /* The whole table from data/board.js for table.js: its head and the unverified group's label as HTML, the number
     of columns, and every row; null when the file is not there. */
  /* The language filter of the multilingual groups: it ticks, in the column chooser, the dataset columns of the
     chosen language (data-lang) and unticks the others of those groups, before table.js reads the form (a listener
     on the select runs before the form's). */
  var language = document.getElementById("f-lang");
  if (language) {
    language.addEventListener("change", function () {
      Array.prototype.forEach.call(document.querySelectorAll("#filters input[name=col][data-lang]"), function (box) {
        box.checked = !language.value || box.dataset.lang === language.value;
      });
    });
    language.form.addEventListener("reset", function () { language.value = ""; });
  }

  window.irboardBoard = function (table) {
    var data = window.irboardData && window.irboardData.board;
    if (!data || table.id !== "board") { return null; }
    return { head: data.head, label: data.label, columns: data.columns, rows: data.rows.map(record), answer: answer };
  };
})();
