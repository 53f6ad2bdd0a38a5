"""Add the course's own stylesheet and script (_ext/static/) to every page.

What they do is commented in the files: accessible colours for otter's check results and
for the self-check quizzes (jupyterquiz), an accessible name for the quizzes' numeric
answer boxes, and the look of the language switch. It also writes the site's /favicon.ico. They live here, beside the extension,
rather than in a top-level _static/: JB1 adds every .js file of _static/ as a script of
every page, which is right for one file but gives no say in the order.
"""

import shutil
from pathlib import Path

from PIL import Image

STATIC = Path(__file__).resolve().parent / "static"


def _add_static_path(app, config):
    config.html_static_path.append(str(STATIC))


def _refresh_copies(app, exception):
    # Sphinx 7.4 does not overwrite a static file an earlier build left in _static/, so an
    # edited course.css would not reach an incremental `make book`: copy ours every time.
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static"
        for path in STATIC.iterdir():
            if path.is_file() and target.is_dir():
                shutil.copyfile(path, target / path.name)


def _write_root_favicon(app, exception):
    # Browsers ask for /favicon.ico by themselves on pages without an icon link (the redirect
    # stubs JB1 writes as index.html), so the site root answers it with the book's own icon.
    if exception is None and app.builder.format == "html" and app.config.html_favicon:
        source = Path(app.confdir) / app.config.html_favicon
        Image.open(source).save(Path(app.outdir) / "favicon.ico", sizes=[(16, 16), (32, 32), (48, 48)])


def setup(app):
    app.connect("config-inited", _add_static_path)
    app.connect("build-finished", _refresh_copies)
    app.connect("build-finished", _write_root_favicon)
    app.add_css_file("course.css")
    app.add_js_file("course.js")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
