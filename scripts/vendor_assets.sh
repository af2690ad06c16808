#!/usr/bin/env bash
# Copy the offline JavaScript assets from node_modules/ (installed by `npm ci`
# from package-lock.json) into _assets/, which the book serves as _static/.
# Result: MathJax 3, require.js and the Jupyter widgets HTML manager are
# served by the site itself, so the book works with no internet access.
# axe-core (the accessibility engine of the browser check) stays in node_modules/: the
# browser check injects it into each page it tests; readers never download it.
set -euo pipefail
cd "$(dirname "$0")/.."

NM=node_modules
for pkg in mathjax requirejs @jupyter-widgets/html-manager axe-core; do
  if [ ! -d "$NM/$pkg" ]; then
    echo "vendor_assets.sh: $NM/$pkg is missing; run 'npm ci' first" >&2
    exit 1
  fi
done

rm -rf _assets
mkdir -p _assets/mathjax/output/chtml _assets/widgets

# MathJax: the combined tex-mml-chtml component plus what it loads lazily.
MJ=$NM/mathjax/es5
cp "$MJ/tex-mml-chtml.js" _assets/mathjax/
cp -r "$MJ/input" "$MJ/a11y" "$MJ/ui" "$MJ/adaptors" _assets/mathjax/
cp -r "$MJ/output/chtml/fonts" _assets/mathjax/output/chtml/

# require.js (the widget manager is an AMD module).
cp "$NM/requirejs/require.js" _assets/require.js

# Widget manager and the font files it references (FontAwesome).
cp "$NM/@jupyter-widgets/html-manager/dist/embed-amd.js" _assets/widgets/
for ext in woff woff2 eot ttf svg; do
  cp "$NM"/@jupyter-widgets/html-manager/dist/*."$ext" _assets/widgets/
done

# widgets-config.js (loaded between require.js and embed-amd.js, see _config.yml):
#  1. tells require.js that the widget manager's modules live in _static/widgets/,
#     so embed-amd.js finds its font files there (instead of the page-relative
#     "@jupyter-widgets/html-manager/dist/...", which would 404);
#  2. gives MathJax 3 the MathJax 2 "Hub.Queue" call that html-manager 1.x uses
#     to typeset widget labels (otherwise: "Cannot read properties of undefined
#     (reading 'Queue')" and labels with math are left raw).
cat > _assets/widgets-config.js <<'JS'
(function () {
  var base = document.currentScript.src.replace(/[^\/]*$/, "");
  require.config({ paths: { "@jupyter-widgets/html-manager/dist": base + "widgets" } });
  function shim() {
    var MJ = window.MathJax;
    if (!MJ || MJ.Hub) return;
    MJ.Hub = {
      Queue: function (job) {
        var el = job && job[2];
        var M = window.MathJax;
        if (!M.typesetPromise) return;
        var ready = (M.startup && M.startup.promise) || Promise.resolve();
        ready.then(function () { return M.typesetPromise(el ? [el] : undefined); })
             .catch(function (e) { console.warn("MathJax typeset of a widget failed", e); });
      }
    };
  }
  shim();
  document.addEventListener("DOMContentLoaded", shim);
  window.addEventListener("load", shim);
})();
JS

echo "vendor_assets.sh: _assets/ ready ($(du -sh _assets | cut -f1))"
