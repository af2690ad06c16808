"""Sphinx extension: drop duplicate <script> entries from every page.

Under Jupyter Book 1.0.4 the inline configuration scripts of sphinx-thebe and
sphinx-togglebutton are added twice per page; the second
`const THEBE_JS_URL = ...` is a JavaScript SyntaxError ("Identifier
'THEBE_JS_URL' has already been declared") that the browser test reports.
"""


def _dedupe(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, out = set(), []
    for js in scripts:
        attrs = getattr(js, "attributes", {}) or {}
        # an inline script may be registered with filename None or "": same script
        key = (getattr(js, "filename", str(js)) or "", tuple(sorted((k, str(v)) for k, v in attrs.items())))
        if key in seen:
            continue
        seen.add(key)
        out.append(js)
    scripts[:] = out


def setup(app):
    # Early priority: 'html-page-context' is emitted with emit_firstresult, which stops
    # at the first handler that returns a template name. The duplicated scripts are
    # global, so they are already in the list at this point.
    app.connect("html-page-context", _dedupe, priority=1)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
