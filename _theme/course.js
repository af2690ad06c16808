/* Accessible names that the theme and the widget manager leave out (WCAG 2.1: 2.5.3 Label
   in Name, 4.1.2 Name, Role, Value). Checked by the browser test's axe-core run. */
(function () {
  "use strict";
  var counter = 0;

  // The theme's search buttons show "Search Ctrl+K" but are labelled "Search": a speech-input
  // user saying what they see would not match. Let the visible text be the name.
  function nameSearchButtons(root) {
    root.querySelectorAll(".search-button-field[aria-label]").forEach(function (button) {
      button.removeAttribute("aria-label");
    });
  }

  // ipywidgets sliders (noUiSlider handles, role="slider") get the widget's description as
  // their name, e.g. "x0"; a slider without a description is named by its readout.
  function nameSliders(root) {
    root.querySelectorAll(".widget-slider, .jupyter-widget-slider, .widget-hslider, .widget-vslider").forEach(function (widget) {
      var label = widget.querySelector(".widget-label");
      var text = label && label.textContent.trim();
      widget.querySelectorAll(".noUi-handle").forEach(function (handle) {
        if (handle.getAttribute("aria-label") || handle.getAttribute("aria-labelledby")) return;
        if (label && text) {
          if (!label.id) label.id = "course-widget-label-" + (++counter);
          handle.setAttribute("aria-labelledby", label.id);
        } else {
          handle.setAttribute("aria-label", "slider");
        }
      });
      widget.querySelectorAll(".widget-readout[contenteditable]").forEach(function (readout) {
        if (!readout.getAttribute("aria-label")) {
          readout.setAttribute("role", "textbox");
          readout.setAttribute("aria-label", (text ? text + " " : "") + "value");
        }
      });
    });
  }

  // Icon-only buttons: the icons' own titles ("Light") would contradict the button's
  // name ("Color mode"); the button's label is the name, the icon is decoration.
  function hideIcons(root) {
    root.querySelectorAll(".theme-switch-button svg, .theme-switch-button i").forEach(function (icon) {
      icon.setAttribute("aria-hidden", "true");
      icon.removeAttribute("role");
      icon.removeAttribute("aria-labelledby");
      icon.querySelectorAll("title").forEach(function (t) { t.remove(); });
      icon.removeAttribute("title");
    });
  }

  // "Show code cell source" is what the toggle shows, so it is also its name (not "Toggle
  // hidden content").
  function nameToggles(root) {
    root.querySelectorAll("details.hide > summary[aria-label]").forEach(function (summary) {
      summary.removeAttribute("aria-label");
    });
  }

  // Solution toggles: sphinx-togglebutton names every one "Toggle hidden content"; a screen
  // reader listing the buttons would hear that a dozen times. Name each after its header
  // ("Solution to Exercise 3.1 (Leaky ReLU)"); aria-expanded already says open or closed.
  // The exercise link inside that header cannot be clicked (course.css: the header is the
  // toggle), so it is no Tab stop either: the toggle button is.
  function nameSolutionToggles(root) {
    root.querySelectorAll(".solution.dropdown").forEach(function (box) {
      var title = box.querySelector(".admonition-title");
      var button = box.querySelector("button.toggle-button");
      var copy = title && title.cloneNode(true);
      if (copy) copy.querySelectorAll("button").forEach(function (b) { b.remove(); });
      var text = copy && copy.textContent.replace(/\s+/g, " ").trim();
      if (button && text && button.getAttribute("aria-label") !== text) button.setAttribute("aria-label", text);
      if (title) title.querySelectorAll("a[href]").forEach(function (a) { a.setAttribute("tabindex", "-1"); });
    });
  }

  // Images drawn by a widget (the plot inside an interact) get the alt text of their cell
  // (cell metadata mystnb.image.alt, written into the page by _ext/output_alt_text.py).
  function describeWidgetImages(root) {
    root.querySelectorAll(".cell .course-image-alt").forEach(function (span) {
      var cell = span.closest(".cell");
      cell.querySelectorAll("img:not([alt])").forEach(function (img) {
        img.setAttribute("alt", span.textContent);
      });
    });
  }

  // Every part of the page in a landmark: the book's sidebar (title, search, chapters).
  function landmarks(root) {
    var sidebar = root.querySelector("#pst-primary-sidebar");
    if (sidebar && !sidebar.getAttribute("role")) {
      sidebar.setAttribute("role", "navigation");
      sidebar.setAttribute("aria-label", "Book");
    }
  }

  function fix(root) {
    nameSearchButtons(root);
    nameSliders(root);
    hideIcons(root);
    nameToggles(root);
    nameSolutionToggles(root);
    describeWidgetImages(root);
    landmarks(root);
  }

  function start() {
    fix(document);
    // widgets are rendered after the page loads (require.js + the widget manager)
    new MutationObserver(function (records) {
      for (var i = 0; i < records.length; i++) {
        if (records[i].addedNodes.length) { fix(document); return; }
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
