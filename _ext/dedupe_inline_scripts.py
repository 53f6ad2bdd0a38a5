"""Drop repeated inline <script> blocks from every page.

With Sphinx 7.4, an extension that calls ``app.add_js_file(None, body=...)`` after the HTML
builder has started (sphinx-thebe does, on ``env-before-read-docs``; sphinx-togglebutton on
``builder-inited``) gets its script twice on every page: once from the registry, with the
file name ``''``, and once added to the builder directly, with ``None``, and the builder's
duplicate check tells the two apart. sphinx-thebe's script declares ``const THEBE_JS_URL``,
so the second copy is a SyntaxError in every reader's console. This keeps the first copy.
"""


def _dedupe(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen = set()
    unique = []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        key = (getattr(js, "filename", js) or "", tuple(sorted(attributes.items())))
        if key in seen:
            continue
        seen.add(key)
        unique.append(js)
    context["script_files"] = unique


def setup(app):
    # Late, after other extensions have added their page scripts.
    app.connect("html-page-context", _dedupe, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
