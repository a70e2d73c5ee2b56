// pytest-agentic report: open the run a link points at; expand, collapse and filter runs.
// No request, no storage; the page reads the same without this script.
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    el.scrollIntoView({block: "start"});
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  var toolbar = document.querySelector(".toolbar");
  if (!toolbar) return;
  toolbar.hidden = false;
  var runs = document.querySelectorAll("details.run");
  function setAll(open) { for (var i = 0; i < runs.length; i++) runs[i].open = open; }
  document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });
  document.getElementById("failed-only").addEventListener("change", function (e) {
    var lists = document.querySelectorAll(".runs");
    for (var i = 0; i < lists.length; i++) lists[i].classList.toggle("failed-only", e.target.checked);
  });
})();
