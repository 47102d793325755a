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
    "self-reported": "self-reported: the main metric not re-scored, values as submitted",
    "rests on claimed ranks": "rests on claimed ranks: the main metric re-scored from ranks below the stored depth that no score samples check",
    "re-scored": "re-scored: the main metric recomputed from the stored ranking against the official judgments (any other value that was not is marked)",
    "reproduced": "reproduced: re-scored, and CI obtained the same ranking by running the declared artifact again"
  };


  /* One row of data/board.js as the HTML that templates/_board.html writes, plus the dataset cells (the layout
     of a row: leaderboard/web/board_data.py), with the marks of the current view (`marks`: view() below): ★ and
     bold among the shown models, and the group means over a chosen language. */
  function rowHtml(row, marks) {
    var flags = row[6], params = row[3] === null ? "" : String(row[3]);
    var html = ["<tr data-id=\"", escape(row[0].toLowerCase()), "\" data-type=\"", escape(row[2]),
      "\" data-params=\"", params, "\" data-license=\"", escape(row[5]), "\" data-open=\"",
      flags.indexOf("o") !== -1 ? 1 : 0, "\" data-zs=\"", flags.indexOf("z") !== -1 ? 1 : 0, "\" data-ver=\"",
      flags.indexOf("v") !== -1 ? 1 : 0, "\" data-tier=\"", escape(row[10]), "\"><th scope=\"row\"><a href=\"",
      escape(row[1]), "\">", escape(row[0]), "</a>", flags.indexOf("b") !== -1 ? " <span class=\"tag\">baseline</span>" : "",
      " <span class=\"tag tier-", escape(row[10].replace(/ /g, "-")), "\" title=\"", escape(TIER_TITLES[row[10]]), "\">", escape(row[10]),
      "</span>",
      "</th><td>", escape(row[2]), "</td><td data-v=\"", params, "\">", escape(row[4]),
      row[3] === null ? "" : flags.indexOf("m") !== -1 ? MEASURED : CLAIMED, "</td>"];
    row[7].forEach(function (cell, g) {
      var over = marks.over[g], top = marks.g[g] === undefined ? cell[4] : marks.g[g];
      if (over) {  /* a multilingual group's mean over the chosen language: no interval, no rank range */
        if (over.mean === null) {
          html.push("<td class=\"s part\" data-v=\"\">", escape(over.part), "</td><td class=\"r part\" data-v=\"\">",
                    escape(over.part), "</td>");
        } else {
          html.push("<td class=\"s lang\" data-v=\"", escape(over.mean), "\">", escape(over.mean + over.mark),
                    over.rank === null ? "" : marks.g[g] ? STAR : "", "</td>",
                    over.rank === null ? "<td class=\"r part\" data-v=\"\">–</td>" : "<td class=\"r\">" + over.rank + "</td>");
        }
      } else if (typeof cell === "string") {  /* partial coverage */
        html.push("<td class=\"s part\" data-v=\"\">", escape(cell), "</td><td class=\"r part\" data-v=\"\">", escape(cell),
                  "</td>");
      } else {
        html.push("<td class=\"s\">", escape(cell[0]), " <small>", escape(cell[1]), "</small>",
                  cell[3] === null ? "" : " <small class=\"rk\" title=\"rank range from corrected pairwise tests\">rank " +
                  escape(cell[3]) + "</small>", cell[3] !== null && top ? STAR : "", flipHtml(cell[5], marks), "</td>",
                  cell[2] === null ? "<td class=\"r part\" data-v=\"\">–</td>" : "<td class=\"r\">" + escape(cell[2]) + "</td>");
      }
    });
    if (row[8]) {
      var unchecked = row[8][0].slice(-1) === "*";
      html.push(row[8][1] ? "<td class=\"pred part\" data-v=\"\">" : "<td class=\"pred\">",
                escape(unchecked ? row[8][0].slice(0, -1) : row[8][0]),
                row[8][2] ? " <small class=\"err\" title=\"predicted, not measured: the method's measured error\">±" +
                escape(row[8][2]) + "</small>" : "", unchecked ? UNCHECKED : "", "</td>");
    }
    row[9].forEach(function (cell, d) {
      var flagged = cell.charAt(0) === "!", unverified = cell.slice(-1) === "*";
      var best = marks.d[d] === undefined ? flagged : marks.d[d];
      var text = cell.slice(flagged ? 1 : 0, unverified ? -1 : undefined);
      html.push(best ? "<td class=\"top\">" : "<td>", escape(text), unverified ? UNVERIFIED : "",
                judgedHtml(row[11] ? row[11][d] : null, d), "</td>");
    });
    html.push("</tr>");
    return html.join("");
  }

  /* The ◊ of a group mean whose rank range ("r") or ★ ("b") could flip over the hole bounds (web.judged_data): the
     ★'s only in the view of every model, whose ★ is the build's (a filter recomputes the set without the bounds). */
  function flipHtml(flips, marks) {
    var shown = marks.filtered ? (flips || "").replace("b", "") : (flips || "");
    return shown && data.flips ? data.flips[shown] : "";
  }

  /* Judged@k beside a dataset value, as render.judged_sub writes it beside a mean on the dataset page. */
  function judgedHtml(hundredths, d) {
    if (hundredths === null || hundredths === undefined || !data.judged) { return ""; }
    var shown = hundredths >= 100 ? (hundredths / 100).toFixed(2) : "0." + (hundredths < 10 ? "0" : "") + hundredths;
    var name = escape(data.judged[d]), short = shown.indexOf("0.") === 0 ? shown.slice(1) : shown;
    return "<sub class=\"jd\" title=\"" + name + " " + shown + ": the share of the top documents that is judged\">" +
      "<span aria-hidden=\"true\">" + short + "</span><span class=\"sr\"> (" + name + " " + shown + ")</span></sub>";
  }

  function number(text) {
    var value = parseFloat(text);
    return isNaN(value) ? null : value;
  }

  /* The sort value of cell `index` of a row, as table.js reads it from a built row (data-v where the cell has one,
     else the number it starts with; text columns lower-cased), without building the row. */
  function value(row, index, marks) {
    var groups = row[7].length, at = index - 3;
    if (index === 0) { return row[0].toLowerCase(); }
    if (index === 1) { return row[2].toLowerCase(); }
    if (index === 2) { return row[3]; }
    if (at < 2 * groups) {
      var cell = row[7][Math.floor(at / 2)], over = marks.over[Math.floor(at / 2)];  /* marks: the record */
      if (over) { return over.mean === null ? null : at % 2 ? over.rank : number(over.mean); }
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

  /* Who could be #1 among the shown models on one column (leaderboard/web/best_data.py): the positions, in the
     column's order (best mean first), of the shown ranked models that no other shown model is significantly better
     than at alpha / (tested - 1), tested being the grid's smallest size at least the number shown. A run of levels
     above the index of that size holds a model better than p wherever one of its positions is shown. */
  function bestAmong(entry, shown) {
    var order = entry[0], grid = entry[1], rows = entry[2], before = new Int32Array(order.length + 1), members = [];
    order.forEach(function (row, p) {  /* before[q]: shown models at the positions above q */
      before[p + 1] = before[p] + (shown[row] ? 1 : 0);
      if (shown[row]) { members.push(p); }
    });
    var size = members.length, k = 0, tops = [];
    while (k < grid.length - 1 && grid[k] < size) { k += 1; }
    members.forEach(function (p) {
      var runs = rows[p], start = 0, beaten = false;
      for (var t = 0; t < runs.length && !beaten; t += 2) {
        var end = start + runs[t + 1];
        beaten = runs[t] > k && before[end] > before[start];
        start = end;
      }
      if (!beaten) { tops.push(p); }  /* the positions after the runs, up to p: level 0, never better */
    });
    var isTop = new Uint8Array(order.length);
    tops.forEach(function (p) { isTop[p] = 1; });
    return { tops: tops, isTop: isTop, size: size, everyone: order.length, order: order, tested: grid[k],
             at: positions(entry) };
  }

  /* Each home row's position in a column's order (-1: not ranked there), computed once per column. */
  function positions(entry) {
    if (!entry.positionOf) {  /* not entry.at: every array has a method of that name */
      entry.positionOf = new Int32Array(rows.length).fill(-1);
      entry[0].forEach(function (row, p) { entry.positionOf[row] = p; });
    }
    return entry.positionOf;
  }

  /* best_data.best_sentence, word for word. */
  function sentence(where, tops, ranked, everyone, filtered, mark, tested) {
    if (!everyone) {
      return "No model is ranked on " + where + ": none has a re-scored result on every one of its datasets, so " +
        "the table cannot say which is best.";
    }
    if (!ranked) { return "None of the shown models is ranked on " + where + " (" + everyone + " ranked models in all)."; }
    if (ranked === 1 && filtered) { return "Who could be #1 on " + where + " among the shown models: " + tops[0] + ", the only one ranked there."; }
    if (ranked === 1) { return "Who could be #1 on " + where + ": " + tops[0] + ", the only model ranked there."; }
    var names = tops.slice(0, 5).join(", ") + (tops.length > 5 ? " and " + (tops.length - 5) + " more" : "");
    return "Who could be #1 on " + where + (filtered ? " among the " + ranked + " shown ranked models" : "") +
      " at " + LEVEL + ": " + names + " (" + tops.length + " of " + ranked + ", marked " + mark + "; each other is " +
      "significantly worse than one of them, one-sided at α / " + (tested - 1) + ").";
  }

  /* judged_words.set_clause, word for word: whether the column's best set holds over the hole bounds, in the view
     of every model (entry[3]: the home rows whose membership could flip, web.judged_data.add_flips). */
  function setClause(entry) {
    var at = positions(entry), flipping = entry[3].slice().sort(function (a, b) { return at[a] - at[b]; })
      .map(function (row) { return rows[row][0]; });
    if (!flipping.length) { return " The set holds over the hole bounds of the unjudged documents within the cutoff."; }
    var names = flipping.slice(0, 5).join(", ") + (flipping.length > 5 ? " and " + (flipping.length - 5) + " more" : "");
    return " ◊ It could flip: unjudged documents within the cutoff could change whether " + names + " " +
      (flipping.length === 1 ? "is" : "are") + " in it.";
  }

  var data = window.irboardData && window.irboardData.board;
  var LEVEL = data ? data.level : "95%";  /* the best set's confidence, 1 - α (analysis/best_words.py) */
  var STAR = " <span class=\"star\" title=\"could be #1 at " + LEVEL + " among the ranked models shown (best set)\">★</span>";
  var rows = data ? data.rows : [];
  var language = document.getElementById("f-lang");

  /* The view's column keys: group means and dataset columns, each in the order of a row's cells. */
  function keysOf(columns) {
    var groupKeys = [], datasetKeys = [];
    Object.keys(columns).forEach(function (name) {
      if (name.indexOf("g-") === 0) { groupKeys[(columns[name].index - 3) / 2] = name; }
      if (name.indexOf("d-") === 0) { datasetKeys.push(name); }
    });
    datasetKeys.sort(function (a, b) { return columns[a].index - columns[b].index; });
    return { groups: groupKeys, datasets: datasetKeys };
  }

  /* Per group key: null, or for a multilingual group with a language chosen, its dataset keys in that language. */
  function chosenDatasets(lang, columns, keys) {
    var boxes = document.querySelectorAll("#filters input[name=col][data-lang]");
    return keys.groups.map(function (name) {
      var mine = Array.prototype.filter.call(boxes, function (box) {
        return columns[box.value] && columns[box.value].th.dataset.group === name.slice(2);
      });
      if (!lang || !mine.length) { return null; }  /* no language, or not a multilingual group */
      return mine.filter(function (box) { return box.dataset.lang === lang; }).map(function (box) { return box.value; });
    });
  }

  /* Before the sort: each record's means of the multilingual groups over the chosen language (record.over), the
     same rule as the build's group means (a model without a result on the chosen dataset gets none). One dataset
     in the language: its mean, and the model's place among those ranked there; more than one: none (the page does
     not carry the values to recompute a weighted mean and its tests). */
  function prepare(state, columns, all) {
    var keys = keysOf(columns), chosen = chosenDatasets(state.lang || "", columns, keys);
    all.forEach(function (record) {
      var row = rows[record.row];
      record.over = chosen.map(function (picked) {
        if (!picked) { return null; }
        if (picked.length !== 1) { return { mean: null, part: "–" }; }
        var cell = row[9][keys.datasets.indexOf(picked[0])].replace(/^!/, ""), text = cell.replace(/[†*]+$/, "");
        if (text === "–") { return { mean: null, part: "0/1" }; }
        var entry = data.best[picked[0]], position = entry ? positions(entry)[record.row] : -1;
        return { mean: text, mark: cell.slice(text.length), rank: position === -1 ? null : position + 1,
                 key: picked[0] };
      });
    });
  }

  /* After the filters: ★ of each group mean and bold of each dataset value among the shown models (a record whose
     marks change loses its element, which table.js builds again), the language line, and the sentence above the
     table on the sorted column. */
  function view(shown, state, columns, all) {
    var visible = new Uint8Array(rows.length), results = {}, lang = state.lang || "";
    var keys = keysOf(columns), chosen = chosenDatasets(lang, columns, keys);
    shown.forEach(function (record) { visible[record.row] = 1; });
    Object.keys(data.best).forEach(function (name) { results[name] = bestAmong(data.best[name], visible); });
    function top(name, row) {
      var at = results[name] ? results[name].at[row] : -1;
      return at !== -1 && results[name].isTop[at] === 1;
    }
    all.forEach(function (record) {
      var marks = { g: [], d: [], over: record.over || [], filtered: shown.length < all.length };
      keys.groups.forEach(function (name, g) {
        var over = marks.over[g];
        if (over) { marks.g[g] = over.mean !== null && over.rank !== null && top(over.key, record.row); }
        else if (results[name]) { marks.g[g] = top(name, record.row); }
      });
      keys.datasets.forEach(function (name, d) { if (results[name]) { marks.d[d] = top(name, record.row); } });
      var signature = JSON.stringify(marks);
      if (signature !== record.signature) {
        record.signature = signature;
        record.marks = marks;
        record.node = null;
      }
    });
    var said = [];
    chosen.forEach(function (picked, g) {
      if (!picked) { return; }
      var name = columns[keys.groups[g]].th.dataset.unit.replace(/ mean ×100$/, "");
      said.push(picked.length === 1 ? name : name + " (" + (picked.length ? picked.length + " datasets in " +
        lang + ": not recomputed in the page, so no mean" : "no dataset in " + lang) + ")");
    });
    var note = document.getElementById("lang-note");
    if (note) {
      var text = said.length ? "Language " + lang + ": the " + said.join(" and ") + " mean" +
        (said.length > 1 ? "s are" : " is") + " over the " + lang + " dataset only, with its mean rank and ★ " +
        "among the models ranked there, and without an interval or rank range: the page does not carry those of a " +
        "recomputed mean (each dataset's interval is on its dataset page)." : "";
      note.hidden = !text;
      if (note.textContent !== text) { note.textContent = text; }
    }
    answer(shown, state, columns, all, results, keys.groups, chosen, lang);
  }

  /* The sentence above the table: who could be #1 on the sorted column (the mean the page is ordered by when the
     sort is not a score) among the shown models, as best_data.best_sentence writes the page's own. */
  function answer(shown, state, columns, all, results, groupKeys, chosen, lang) {
    var target = document.getElementById("answer-text"), form = document.getElementById("filters");
    if (!target) { return; }
    var name = state.sort || (form && form.dataset.sort);
    if (name && name.indexOf("r-") === 0) { name = "g-" + name.slice(2); }
    if (!name || !columns[name] || !results[name]) { name = form && form.dataset.sort; }
    if (!name || !columns[name] || !results[name]) { return; }
    var where = columns[name].th.dataset.where, got = results[name], mark = name.indexOf("d-") === 0 ? "bold" : "★";
    var text;
    var g = groupKeys.indexOf(name);
    if (g !== -1 && chosen[g]) {
      var group = columns[name].th.dataset.unit.replace(/ mean ×100$/, "");
      if (chosen[g].length !== 1) {
        text = group + " has " + (chosen[g].length ? chosen[g].length + " datasets in " + lang + ", whose mean the " +
          "page does not recompute" : "no dataset in " + lang) + ", so it names no best model there.";
        if (target.textContent !== text) { target.textContent = text; }
        return;
      }
      got = results[chosen[g][0]];
      where = group + " in " + lang + " (1 dataset)";
    }
    var ids = got.tops.map(function (p) { return rows[got.order[p]][0]; });
    text = sentence(where, ids, got.size, got.everyone, shown.length < all.length, mark, got.tested);
    var entry = g !== -1 && chosen[g] ? data.best[chosen[g][0]] : data.best[name];
    if (shown.length === all.length && got.size >= 2 && entry && entry[3]) { text += setClause(entry); }
    if (target.textContent !== text) { target.textContent = text; }
  }

  /* The end of the sort line under the table when it is sorted by the group mean `name`: how sure the order is.
     Under a chosen language a multilingual group's mean is recomputed over that language's dataset and has no
     rank range; "" where the rank ranges shown say it (table.js's own words). */
  function sortNote(name, state, columns) {
    var lang = state.lang || "", keys = keysOf(columns), g = keys.groups.indexOf(name);
    var picked = g === -1 ? null : chosenDatasets(lang, columns, keys)[g];
    if (!picked) { return ""; }
    return picked.length === 1 ? "; each mean is over the " + lang + " dataset only and has no rank range, so " +
      "nothing here says how sure the order is (the dataset page's rank ranges do)." :
      "; this group has no mean in " + lang + ", so the rows keep the default order.";
  }

  /* One row as table.js handles it: what the filters read, its table body, its sort values, and its element,
     built from rowHtml when it is first shown (a long board shows one page of rows at a time). */
  function record(row, index) {
    var flags = row[6], self = {
      props: { id: row[0].toLowerCase(), type: row[2], params: row[3] === null ? "" : String(row[3]), license: row[5],
               open: flags.indexOf("o") !== -1 ? "1" : "0", zs: flags.indexOf("z") !== -1 ? "1" : "0",
               ver: flags.indexOf("v") !== -1 ? "1" : "0", tier: row[10] },
      ranked: flags.indexOf("v") !== -1,
      id: row[0],
      row: index,
      marks: { g: [], d: [], over: [] },
      over: [],
      signature: "",
      node: null,
      html: function () { return rowHtml(row, self.marks); },
      value: function (column) { return value(row, column, self); }
    };
    return self;
  }

  /* The language filter of the multilingual groups: it ticks, in the column chooser, the dataset columns of the
     chosen language (data-lang) and unticks the others of those groups, before table.js reads the form (a listener
     on the select runs before the form's). */
  if (language) {
    language.addEventListener("change", function () {
      Array.prototype.forEach.call(document.querySelectorAll("#filters input[name=col][data-lang]"), function (box) {
        box.checked = !language.value || box.dataset.lang === language.value;
      });
    });
    language.form.addEventListener("reset", function () { language.value = ""; });
  }

  /* The whole table from data/board.js for table.js: its head and the unverified group's label as HTML, the number
     of columns, every row, and view(), which table.js calls with the matching records before it builds rows. */
  window.irboardBoard = function (table) {
    if (!data || table.id !== "board") { return null; }
    return { head: data.head, label: data.label, columns: data.columns, rows: rows.map(record), prepare: prepare,
             view: view, sortNote: sortNote };
  };
})();
