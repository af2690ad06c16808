"""Image outputs get the alt text that the notebook gives them.

A plot's alt text comes from its cell's metadata, ``{"mystnb": {"image": {"alt": "..."}}}``,
which myst-nb reads itself. A figure can also carry its own, in the output's metadata,
``{"image/png": {"alt": "..."}}``: minigrad.viz.draw_graph does this, so a graph drawing is
described by the graph it shows. myst-nb 1.x reads only width and height from an output's
metadata; this extension lets it read ``alt`` too (the cell's alt wins when both are given).

A widget's output (e.g. the plot inside an ``interact``) is drawn in the browser from the
stored widget state, not by myst-nb: for those images the cell's alt text is written, hidden,
into the cell (``<span class="course-image-alt" hidden>``), and _theme/course.js gives it to
every image of the cell that has none.
"""
from __future__ import annotations

import html


def _install() -> None:
    from myst_nb.core.render import NbElementRenderer

    original = NbElementRenderer.render_image
    if getattr(original, "_course_alt", False):
        return

    def render_image(self, data):
        result = original(self, data)
        alt = (data.output_metadata or {}).get(data.mime_type, {}).get("alt")
        if alt:
            for node in result:
                if not node.get("alt"):
                    node["alt"] = str(alt)
        return result

    render_image._course_alt = True
    NbElementRenderer.render_image = render_image


def _cell_alt(app, doctree) -> None:
    from docutils import nodes

    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") != "cell_code":
            continue
        alt = ((cell.get("cell_metadata") or {}).get("mystnb") or {}).get("image", {}).get("alt")
        if alt:
            cell += nodes.raw("", f'<span class="course-image-alt" hidden>{html.escape(str(alt))}</span>',
                              format="html")


def setup(app):
    _install()
    app.connect("doctree-read", _cell_alt)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
