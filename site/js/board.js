/* Home page: the whole leaderboard (every model, every dataset column) from data/board.js, which <script src>
   loads from file:// as well as http. The page's own HTML holds the top rows and the group means, shown before
   any script runs; table.js calls window.irboardFillTable before it sorts and filters. */
(function () {
  "use strict";

  function list(items) { return Array.prototype.slice.call(items); }

  function escape(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  var UNVERIFIED = "<span class=\"unv\" title=\"not verified: not re-scored from a stored ranking\">*</span>" +
    "<span class=\"sr\"> (not verified)</span>";
  var UNCHECKED = "<span class=\"unv\" title=\"not verified: its score samples were not checked against a stored " +
    "ranking\">*</span><span class=\"sr\"> (not verified)</span>";  /* a prediction: templates/_macros.html */

  /* One row of data/board.js as the HTML that templates/_board.html writes, plus the dataset cells (the layout
     of a row: leaderboard/web/board_data.py). */
  function rowHtml(row) {
    var flags = row[6], params = row[3] === null ? "" : String(row[3]);
    var html = ["<tr data-id=\"", escape(row[0].toLowerCase()), "\" data-type=\"", escape(row[2]),
      "\" data-params=\"", params, "\" data-license=\"", escape(row[5]), "\" data-open=\"",
      flags.indexOf("o") !== -1 ? 1 : 0, "\" data-zs=\"", flags.indexOf("z") !== -1 ? 1 : 0, "\" data-ver=\"",
      flags.indexOf("v") !== -1 ? 1 : 0, "\"><th scope=\"row\"><a href=\"", escape(row[1]), "\">", escape(row[0]),
      "</a>", flags.indexOf("b") !== -1 ? " <span class=\"tag\">baseline</span>" : "",
      flags.indexOf("v") !== -1 ? " <span class=\"tag ok\">verified</span>" : " <span class=\"tag no\">not verified</span>",
      "</th><td>", escape(row[2]), "</td><td data-v=\"", params, "\">", escape(row[4]), "</td>"];
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

  /* Replace the page's partial table by the whole one from data/board.js; false when it is not there. */
  window.irboardFillTable = function (table) {
    var data = window.irboardData && window.irboardData.board;
    if (!data || table.id !== "board") { return false; }
    var ranked = [], unranked = [];
    data.rows.forEach(function (row) { (row[6].indexOf("v") !== -1 ? ranked : unranked).push(rowHtml(row)); });
    table.tHead.innerHTML = data.head;
    list(table.tBodies).forEach(function (body) { body.remove(); });
    var html = "<tbody class=\"ranked\">" + ranked.join("") + "</tbody>";
    if (unranked.length) {
      html += "<tbody class=\"unranked\"><tr class=\"group-label\"><th scope=\"rowgroup\" colspan=\"" + data.columns +
        "\">" + data.label + "</th></tr>" + unranked.join("") + "</tbody>";
    }
    table.insertAdjacentHTML("beforeend", html);
    return true;
  };
})();
