// The status page's live updates: the server sends re-rendered sections
// (escaped HTML) as server-sent events, and they replace the page's.
// No server-supplied text is ever evaluated as script; the page's
// Content-Security-Policy allows this file only.
(function () {
  "use strict";
  var state = document.getElementById("stream");
  function show(text, cls) {
    if (state) { state.textContent = text; state.className = cls; }
  }
  if (!window.EventSource) { show("no live updates in this browser", "bad"); return; }
  var es = new EventSource("/ui/events" + window.location.search);
  es.addEventListener("open", function () { show("live", "ok"); });
  es.addEventListener("error", function () { show("reconnecting…", "bad"); });
  es.addEventListener("sections", function (ev) {
    var sections;
    try { sections = JSON.parse(ev.data); } catch (e) { return; }
    Object.keys(sections).forEach(function (name) {
      var el = document.getElementById("sec-" + name);
      if (!el) { return; }
      // Keep open <details> open across updates.
      var open = {};
      el.querySelectorAll("details[open]").forEach(function (d) { var tr = d.closest("tr"); if (tr && tr.id) { open[tr.id] = true; } });
      el.innerHTML = sections[name];
      el.querySelectorAll("tr").forEach(function (tr) {
        if (open[tr.id]) { var d = tr.querySelector("details"); if (d) { d.open = true; } }
      });
    });
    document.body.setAttribute("data-updated", String(Date.now()));
  });
})();
