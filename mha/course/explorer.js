/* mha.course.explorer: an attention viewer with no dependencies and no network.
   Each <div class="mha-explorer"> holds its data in a <script type="application/json">:
   {tokens: [..T], layers: [names], heads: [..], weights: [layer][head][query][key]}.
   Pick a layer and a head; hover or focus a token (Tab to the row, then arrow keys) to
   shade every token by the weight the chosen head gives it from that query. */
(function () {
  "use strict";
  function shade(w) {
    // white -> orange; black text keeps a contrast above 7:1 at every weight
    var r = Math.round(255 - w * (255 - 240)), g = Math.round(255 - w * (255 - 150)),
        b = Math.round(255 - w * (255 - 70));
    return "rgb(" + r + "," + g + "," + b + ")";
  }
  function setup(root) {
    if (root.getAttribute("data-ready") === "1") return;
    root.setAttribute("data-ready", "1");
    var data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    var layerSel = root.querySelector("select.mha-layer"), headSel = root.querySelector("select.mha-head");
    var row = root.querySelector(".mha-tokens"), info = root.querySelector(".mha-info");
    var buttons = [], query = data.query === undefined ? data.tokens.length - 1 : data.query;
    data.tokens.forEach(function (tok, i) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "mha-token";
      b.textContent = tok;
      b.setAttribute("data-index", i);
      b.tabIndex = -1;
      b.addEventListener("mouseenter", function () { select(i, false); });
      b.addEventListener("focus", function () { select(i, false); });
      b.addEventListener("click", function () { select(i, true); });
      b.addEventListener("keydown", function (e) {
        var j = i;
        if (e.key === "ArrowRight" || e.key === "ArrowDown") j = Math.min(i + 1, buttons.length - 1);
        else if (e.key === "ArrowLeft" || e.key === "ArrowUp") j = Math.max(i - 1, 0);
        else if (e.key === "Home") j = 0;
        else if (e.key === "End") j = buttons.length - 1;
        else return;
        e.preventDefault();
        select(j, true);
      });
      row.appendChild(b);
      buttons.push(b);
    });
    function render() {
      var w = data.weights[layerSel.selectedIndex][headSel.selectedIndex][query];
      var order = [];
      buttons.forEach(function (b, j) {
        var x = j < w.length ? w[j] : 0;
        b.style.backgroundColor = shade(Math.min(1, Math.max(0, x)));
        b.setAttribute("aria-pressed", j === query ? "true" : "false");
        b.setAttribute("aria-label", data.tokens[j] + " (position " + j + "), weight " + x.toFixed(2));
        b.tabIndex = j === query ? 0 : -1;
        order.push([x, j]);
      });
      order.sort(function (a, c) { return c[0] - a[0]; });
      var top = order.slice(0, 3).map(function (p) {
        return "\u201c" + data.tokens[p[1]] + "\u201d (" + p[1] + ") " + p[0].toFixed(2);
      });
      info.textContent = data.layers[layerSel.selectedIndex] + ", " + data.heads[headSel.selectedIndex] +
        ": query \u201c" + data.tokens[query] + "\u201d (" + query + ") attends most to " + top.join(", ");
      root.setAttribute("data-view", layerSel.selectedIndex + "," + headSel.selectedIndex + "," + query);
    }
    function select(i, focus) {
      query = i;
      render();
      if (focus) buttons[i].focus();
    }
    layerSel.addEventListener("change", render);
    headSel.addEventListener("change", render);
    render();
  }
  function setupAll() {
    var roots = document.querySelectorAll("div.mha-explorer");
    for (var k = 0; k < roots.length; k++) setup(roots[k]);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupAll);
  else setupAll();
})();
