"""Leave the Colab setup cell out of the HTML book; the notebook keeps it.

Every chapter and exercise notebook starts with a code cell that installs ``mha`` on Colab
(tests/test_colab_setup.py keeps it there). A reader of the book does not run it, and on a
phone it filled the first screen of every page. Tagging 26 notebooks ``remove-cell`` by hand
would be one more thing each new notebook can forget; this removes, in one place, every code
cell whose source starts with one of SETUP_HEADER's first lines (English, or the Chinese exercises'
translated one) from the page. The notebook, its download and its Colab/Binder links are unchanged.
tests/browser/test_site.py checks the cell is on no page.
"""

from docutils import nodes

SETUP_HEADER = ("# Setup: on Google Colab", "# 准备：在 Google Colab")


def _source(cell: nodes.Element) -> str:
    for block in cell.findall(nodes.literal_block):
        return block.astext()
    return ""


def _remove_setup_cells(app, doctree):
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") == "cell_code" and _source(cell).startswith(SETUP_HEADER):
            cell.parent.remove(cell)


def setup(app):
    app.connect("doctree-read", _remove_setup_cells)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
