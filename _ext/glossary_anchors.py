"""Let Markdown links reach glossary terms: ``[cross-attention](../glossary.md#term-cross-attention)``.

A Sphinx ``glossary`` gives every term an HTML id ``term-<term>``, and the ``{term}`` role
links to it, but a role shows up as raw text when a notebook is opened in Jupyter or Colab.
A plain Markdown link reads well everywhere, yet MyST only resolves ``file.md#id`` when
``id`` is a heading slug of that file and warns (an error under ``-W``) otherwise.
This extension registers each glossary term id as such a slug, so the link resolves and a
misspelt term still fails the build.
"""

from docutils import nodes


def _register_term_ids(app, doctree):
    env = app.env
    slugs = None
    for term in doctree.findall(nodes.term):
        for node_id in term["ids"]:
            if node_id.startswith("term-"):
                if slugs is None:
                    slugs = env.metadata[env.docname].setdefault("myst_slugs", {})
                # MyST reads (line, target id, implicit link text).
                slugs.setdefault(node_id, (term.line or 0, node_id, term.astext()))


def setup(app):
    app.connect("doctree-read", _register_term_ids)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
