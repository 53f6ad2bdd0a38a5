// The course's own script for the HTML book (added by _ext/course_static.py).
// jupyterquiz writes its numeric answer box after a text "Type numeric answer here:" that is
// not a <label> of the box, so screen readers (and axe-core's "label" rule) find no name for
// it. Give each box that text as its accessible name. The quizzes render while the page is
// parsed (their script is in the page), so they are there on DOMContentLoaded.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("input.Input-text:not([aria-label])").forEach(function (box) {
    var label = box.previousElementSibling;
    box.setAttribute("aria-label", (label && label.textContent.trim()) || "Numeric answer");
  });
});
