"""The analysis package stands in layers (docs/design.md, "The Python package"): each module
imports only modules of its own layer or of the layers below it, and no two modules import each
other, directly or around a circle. Read from the source with `ast` (function-level imports
included), so the commit that breaks the rule fails here.

    data -> analysis -> present -> commands     (each may import those to its left)

`errors.py` and `__init__.py` at the package's root stand below every layer and import nothing
of the package. A module keeps to one job: over MAX_LINES lines, its opening docstring says why
("Over 300 lines: ...").
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gmbtools"
LAYERS = ("data", "analysis", "present", "commands")
ROOT_MODULES = {"errors", "__init__"}
MAX_LINES = 300
WHY_LONGER = "Over 300 lines: "


def module_name(path: Path, root: Path) -> str:
    """gmbtools/present/figures/sweeps.py -> 'present.figures.sweeps' (relative to the
    package); a package's __init__.py is the package itself."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path, root: Path, package: str) -> set[str]:
    """The modules of the package that the file imports, as names relative to the package
    (`from .x import y` where y is a module counts as importing x.y)."""
    name = module_name(path, root)
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package and name != "__init__" else name.split(".")[:-1]
    if name == "__init__":
        here = []
    modules = {module_name(p, root) for p in root.rglob("*.py")}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and (node.module == package or node.module.startswith(package + ".")):
                target = node.module[len(package) + 1:]
            else:
                continue
            for alias in node.names:
                child = f"{target}.{alias.name}" if target else alias.name
                targets.append(child if child in modules else target)
        elif isinstance(node, ast.Import):
            targets = [a.name[len(package) + 1:] for a in node.names
                       if a.name.startswith(package + ".")]
        found.update(t for t in targets if t and t != name)
    return found


def layer_of(module: str) -> int:
    """-1 for the root modules below every layer, else the index of its layer."""
    first = module.split(".")[0]
    if first in ROOT_MODULES:
        return -1
    if first not in LAYERS:
        raise AssertionError(f"{module}: not in a layer ({', '.join(LAYERS)}) nor a root module "
                             f"({', '.join(sorted(ROOT_MODULES))})")
    return LAYERS.index(first)


def graph(root: Path, package: str = "gmbtools") -> dict[str, set[str]]:
    return {module_name(p, root): imports(p, root, package) for p in sorted(root.rglob("*.py"))}


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import from a lower layer to a higher one, and every import by a root module."""
    wrong = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(module) or (layer_of(module) == -1 and target):
                wrong.append(f"{module} imports {target}")
    return wrong


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


# --- the package -------------------------------------------------------------------------------

def test_every_module_is_in_a_layer():
    for module in graph(PACKAGE):
        layer_of(module)  # raises for a module outside the layers
    for layer in LAYERS:
        assert (PACKAGE / layer / "__init__.py").is_file(), f"gmbtools/{layer}/ is not a package"


def test_no_import_runs_up():
    assert upward(graph(PACKAGE)) == []


def test_no_circle():
    assert circles(graph(PACKAGE)) == []


def too_long(root: Path) -> list[str]:
    """Modules over MAX_LINES lines whose docstring does not say why."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        lines = len(text.splitlines())
        if lines > MAX_LINES and WHY_LONGER not in (ast.get_docstring(ast.parse(text)) or ""):
            found.append(f"{module_name(path, root)}: {lines} lines")
    return found


def test_no_module_over_300_lines_without_a_reason():
    assert too_long(PACKAGE) == []


def pictured_arrows(design: str) -> set[tuple[str, str]]:
    """The solid arrows (A --> B) of design.md's picture of the Python layers: the mermaid block
    that draws the node `data`."""
    for block in re.findall(r"```mermaid\n(.*?)```", design, re.S):
        if re.search(r"^\s*data\[", block, re.M):
            return set(re.findall(r"^\s*(\w+) --> (\w+)\s*$", block, re.M))
    raise AssertionError("docs/design.md has no picture of the Python layers")


def test_the_picture_draws_exactly_the_layers_imports():
    design = (PACKAGE.parents[1] / "docs" / "design.md").read_text()
    code = {(a.split(".")[0], b.split(".")[0]) for a, targets in graph(PACKAGE).items()
            for b in targets if a.split(".")[0] != b.split(".")[0]
            and a.split(".")[0] != "__init__"}
    assert pictured_arrows(design) == code


# --- the checker itself, on made-up packages ----------------------------------------------------

def make_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "gmbtools"
    for name, text in {"__init__.py": "", "errors.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for layer in LAYERS:
        (package / layer).mkdir(exist_ok=True)
        (package / layer / "__init__.py").touch()
    return package


def test_checker_accepts_imports_downward(tmp_path):
    package = make_package(tmp_path, {
        "data/results.py": "from ..errors import GmbError\n",
        "analysis/model.py": "from ..data import results\nfrom gmbtools.data.results import x\n",
        "present/summary.py": "def f():\n    from ..analysis import model\n",
        "commands/run.py": "from gmbtools.present import summary\nfrom . import cli\n",
        "commands/cli.py": "import gmbtools.errors\n",
    })
    edges = graph(package)
    assert edges["analysis.model"] == {"data.results"}
    assert edges["present.summary"] == {"analysis.model"}
    assert edges["commands.run"] == {"present.summary", "commands.cli"}
    assert upward(edges) == [] and circles(edges) == []


def test_checker_finds_an_import_up(tmp_path):
    package = make_package(tmp_path, {
        "data/results.py": "def f():\n    from ..present import summary\n",  # inside a function
        "present/summary.py": "",
    })
    assert upward(graph(package)) == ["data.results imports present.summary"]


def test_checker_finds_a_circle(tmp_path):
    package = make_package(tmp_path, {
        "present/peer_figure.py": "from .peer_matrix import table\n",
        "present/peer_matrix.py": "from . import peer_figure\n",
    })
    assert circles(graph(package)) == [["present.peer_figure", "present.peer_matrix"]]


def test_checker_refuses_a_module_outside_the_layers(tmp_path):
    package = make_package(tmp_path, {"helpers.py": ""})
    with pytest.raises(AssertionError, match="not in a layer"):
        for module in graph(package):
            layer_of(module)


def test_checker_refuses_a_root_module_that_imports(tmp_path):
    package = make_package(tmp_path, {"data/results.py": ""})
    (package / "errors.py").write_text("from .data import results\n")
    assert upward(graph(package)) == ["errors imports data.results"]



def test_checker_finds_a_long_module_that_says_not_why(tmp_path):
    body = "x = 1\n" * MAX_LINES
    package = make_package(tmp_path, {
        "data/short.py": '"""Short."""\n',
        "data/long.py": '"""Long."""\n' + body,
        "data/long_for_a_reason.py": f'"""Long.\n\n{WHY_LONGER}one table."""\n' + body,
    })
    assert too_long(package) == [f"data.long: {MAX_LINES + 1} lines"]
