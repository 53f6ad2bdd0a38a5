/* mha.course.explorer: an attention viewer with no dependencies and no network.
   Each <div class="mha-explorer"> holds its data in a <script type="application/json">:
   {tokens: [..T], layers: [names], heads: [names], weights: [layer][head][query][key],
    query, causal, spans: [[first, last, label]], words: {interface texts}}.
   All heads: a thumbnail of every head's T x T pattern; click one to enlarge it.
   One query: hover a token to preview, click it (or Tab to the row, then arrow keys) to
   choose the query; every token is shaded by the weight the chosen head gives it. */
(function () {
  "use strict";
  var SPAN_COLOURS = ["#01665e", "#542788", "#1b7837", "#8c510a"];  // >= 4.5:1 on white
  var QUERY_COLOUR = "#d95f02";

  function ramp(w) {
    // white -> dark blue on the square root of the weight, so that 0.02 still shows
    var s = Math.sqrt(Math.min(1, Math.max(0, w)));
    return [Math.round(255 - s * (255 - 8)), Math.round(255 - s * (255 - 48)),
            Math.round(255 - s * (255 - 107))];
  }
  function css(c) { return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")"; }
  function luminance(c) {
    var l = c.map(function (v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }
  function textColour(c) {
    // black or white, whichever contrasts more with the shade (at least 4.5:1 either way)
    var L = luminance(c);
    return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? "#000" : "#fff";
  }
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (m, k) { return k in values ? values[k] : m; });
  }
  function spanOf(spans, i) {
    for (var k = 0; k < spans.length; k++) if (spans[k][0] <= i && i <= spans[k][1]) return k;
    return -1;
  }

  function draw(canvas, rows, T, cell, margin, spans, query) {
    // the pattern: row t = query t, column j = key j; spans as bars left of and above it
    var size = margin + T * cell;
    canvas.width = size;
    canvas.height = size;
    var ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, size, size);
    for (var t = 0; t < T; t++) {
      var row = rows[t];
      for (var j = 0; j < row.length; j++) {
        if (row[j] <= 0) continue;
        ctx.fillStyle = css(ramp(row[j]));
        ctx.fillRect(margin + j * cell, margin + t * cell, cell, cell);
      }
    }
    spans.forEach(function (span, k) {
      ctx.fillStyle = SPAN_COLOURS[k % SPAN_COLOURS.length];
      var a = margin + span[0] * cell, n = (span[1] - span[0] + 1) * cell;
      ctx.fillRect(0, a, margin - 1, n);  // its rows (queries)
      ctx.fillRect(a, 0, n, margin - 1);  // its columns (keys)
    });
    if (query !== null) {
      ctx.strokeStyle = QUERY_COLOUR;
      ctx.lineWidth = Math.max(1, cell / 2);
      ctx.strokeRect(margin, margin + query * cell, T * cell, cell);
    }
  }

  function setup(root) {
    if (root.getAttribute("data-ready") === "1") return;
    root.setAttribute("data-ready", "1");
    var data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    var words = data.words, spans = data.spans || [], T = data.tokens.length;
    var layerSel = root.querySelector("select.mha-layer"), headSel = root.querySelector("select.mha-head");
    var grid = root.querySelector(".mha-grid"), big = root.querySelector("canvas.mha-big");
    var row = root.querySelector(".mha-tokens"), info = root.querySelector(".mha-info");
    var legend = root.querySelector(".mha-legend");
    var buttons = [], thumbs = [];
    var pinned = data.query === undefined ? T - 1 : data.query;  // the chosen query
    var shown = pinned;  // the query on screen: the chosen one, or the one under the mouse

    // the legend: the colour ramp, then one swatch per marked span
    var stops = [];
    for (var k = 0; k <= 10; k++) stops.push(css(ramp(k / 10)) + " " + (k * 10) + "%");
    legend.innerHTML = "";
    legend.appendChild(document.createTextNode(words.legend + ": 0"));
    var bar = document.createElement("span");
    bar.className = "mha-ramp";
    bar.style.background = "linear-gradient(to right, " + stops.join(", ") + ")";
    bar.setAttribute("role", "img");
    bar.setAttribute("aria-label", words.legend + ": 0 \u2192 1");
    legend.appendChild(bar);
    legend.appendChild(document.createTextNode("1"));
    spans.forEach(function (span, k) {
      var item = document.createElement("span");
      var sw = document.createElement("span");
      sw.className = "mha-swatch";
      sw.style.backgroundColor = SPAN_COLOURS[k % SPAN_COLOURS.length];
      item.appendChild(sw);
      item.appendChild(document.createTextNode(" " + span[2] + " (" + span[0] + "\u2013" + span[1] + ")"));
      legend.appendChild(item);
    });
    var q = document.createElement("span");
    var qs = document.createElement("span");
    qs.className = "mha-swatch";
    qs.style.backgroundColor = QUERY_COLOUR;
    q.appendChild(qs);
    q.appendChild(document.createTextNode(" " + words.query_row));
    legend.appendChild(q);

    // all heads: one row of thumbnails per layer
    data.layers.forEach(function (layerName, l) {
      var line = document.createElement("div");
      line.className = "mha-grid-row";
      var name = document.createElement("span");
      name.textContent = layerName;
      line.appendChild(name);
      data.heads.forEach(function (headName, h) {
        var b = document.createElement("button");
        b.type = "button";
        b.className = "mha-thumb";
        b.setAttribute("data-layer", l);
        b.setAttribute("data-head", h);
        b.setAttribute("aria-label", fill(words.enlarge, {layer: layerName, head: headName}));
        var c = document.createElement("canvas");
        draw(c, data.weights[l][h], T, Math.max(1, Math.floor(96 / T)), 3, spans, null);
        c.style.width = "96px";
        c.style.height = "96px";
        b.appendChild(c);
        b.addEventListener("click", function () {
          layerSel.selectedIndex = l;
          headSel.selectedIndex = h;
          render();
        });
        line.appendChild(b);
        thumbs.push(b);
      });
      grid.appendChild(line);
    });

    // one query: the tokens
    data.tokens.forEach(function (tok, i) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "mha-token";
      b.textContent = tok;
      b.setAttribute("data-index", i);
      var k = spanOf(spans, i);
      b.style.borderBottomColor = k < 0 ? "#767676" : SPAN_COLOURS[k % SPAN_COLOURS.length];
      b.tabIndex = -1;
      b.addEventListener("mouseenter", function () { shown = i; render(); });
      b.addEventListener("mouseleave", function () { shown = pinned; render(); });
      b.addEventListener("focus", function () { choose(i, false); });
      b.addEventListener("click", function () { choose(i, true); });
      b.addEventListener("keydown", function (e) {
        var j = i;
        if (e.key === "ArrowRight" || e.key === "ArrowDown") j = Math.min(i + 1, T - 1);
        else if (e.key === "ArrowLeft" || e.key === "ArrowUp") j = Math.max(i - 1, 0);
        else if (e.key === "Home") j = 0;
        else if (e.key === "End") j = T - 1;
        else return;
        e.preventDefault();
        choose(j, true);
      });
      row.appendChild(b);
      buttons.push(b);
    });

    function render() {
      var l = layerSel.selectedIndex, h = headSel.selectedIndex;
      var names = {layer: data.layers[l], head: data.heads[h]};
      var w = data.weights[l][h][shown];
      var order = [];
      buttons.forEach(function (b, j) {
        var allowed = j < w.length;  // a causal row holds only the keys the query may see
        var x = allowed ? w[j] : 0;
        var c = ramp(x);
        b.style.backgroundColor = css(c);
        b.style.color = textColour(c);
        b.setAttribute("aria-pressed", j === pinned ? "true" : "false");
        b.setAttribute("aria-label", fill(words.token, {token: data.tokens[j], i: j, w: x.toFixed(2)}));
        b.tabIndex = j === pinned ? 0 : -1;
        if (allowed) order.push([x, j]);
      });
      order.sort(function (a, c) { return c[0] - a[0] || a[1] - c[1]; });
      var top = order.slice(0, 3).map(function (p) {
        return "\u201c" + data.tokens[p[1]] + "\u201d (" + p[1] + ") " + p[0].toFixed(2);
      });
      info.textContent = fill(words.attends, {layer: names.layer, head: names.head,
        token: data.tokens[shown], i: shown, top: top.join(", ")});
      thumbs.forEach(function (b) {
        var on = +b.getAttribute("data-layer") === l && +b.getAttribute("data-head") === h;
        b.setAttribute("aria-pressed", on ? "true" : "false");
      });
      draw(big, data.weights[l][h], T, Math.max(2, Math.floor(384 / T)), 8, spans, shown);
      big.setAttribute("aria-label", fill(words.pattern, names));
      root.setAttribute("data-view", l + "," + h + "," + shown);
    }
    function choose(i, focus) {
      pinned = shown = i;
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
