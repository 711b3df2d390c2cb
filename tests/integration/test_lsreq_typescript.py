# ruff: noqa: E501  (the seed's response has a long line)
"""The seed's two Language Server Request exchanges on the dataflow TypeScript fixture,
against a real headless Neovim and each TypeScript server: typescript-language-server and
vtsls (issue 35)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.integration.harness import TS_SERVERS, Bridge

FIXTURE = ROOT / "tests" / "fixtures" / "dataflow"
TEST_FILE = "packages/dataflow/test/operators/multiply-schemas.test.ts"
NEW_FILE = "packages/dataflow/test/fixtures/electrical-power.ts"

# The seed's settings: parameter-name hints only (the embedded default adds type hints), in
# each server's own words (vtsls takes VS Code's settings).
SEED_INLAY = {"ts_ls": """
vim.lsp.config('ts_ls', { init_options = { preferences = {
  includeInlayParameterNameHints = 'all', includeInlayVariableTypeHints = false,
  includeInlayFunctionLikeReturnTypeHints = false, includeInlayPropertyDeclarationTypeHints = false,
  includeInlayFunctionParameterTypeHints = false, includeInlayEnumMemberValueHints = false } } })
""", "vtsls": """
local hints = { inlayHints = { parameterNames = { enabled = 'all' }, parameterTypes = { enabled = false },
  variableTypes = { enabled = false }, propertyDeclarationTypes = { enabled = false },
  functionLikeReturnTypes = { enabled = false }, enumMemberValues = { enabled = false } } }
vim.lsp.config('vtsls', { settings = { typescript = hints, javascript = hints } })
"""}

QUERY = f"""*** Begin Language Server Request
*** File: {TEST_FILE}
@@ type V = typeof vS['infer']
^ V
@@ type A = typeof aS['infer']
^ A
? const eq = math({{ v: vS, a: aS }}, `v * a`)
^ math[docs]
@@ const res = eq.evaluate({{ v: 230, a: 5 }})
^ res
*** End Language Server Request
"""

# The seed's response (its long docs line is the fixture's JSDoc), but for one space: the seed shows `},/*<inlay>equation:` where the
# file has `}, ` — the bridge never drops the code's own characters.
QUERY_RESPONSE = f"""*** Begin Language Server Response
*** File: {TEST_FILE}
@@ type V = typeof vS['infer']
^ V
/*<hover:V>```typescript
type V = number & UnitOfQuantity<"volts", "Voltage">
```</hover:V>*/
@@ type A = typeof aS['infer']
^ A
/*<hover:A>```typescript
type A = number & UnitOfQuantity<"amperes", "Electric Current">
```</hover:A>*/
? const eq = math(/*<inlay>inputs:</inlay>*/{{ v: vS, a: aS }}, /*<inlay>equation:</inlay>*/`v * a`)
^ math[docs]
/*<docs:math>
The `math` function takes an object of input variable schemas and a math string. A handle is returned with properties:
- `schema`: Containing the calculated unit.
- `evaluate`: Takes an object of the variable's values, returns the answer.
</docs:math>*/
@@ const res = eq.evaluate({{ v: 230, a: 5 }})
^ res
/*<hover:res>```typescript
const res: number & UnitOfQuantity<"watts", "Power">
```</hover:res>*/
@@ const wrong: string = 42
/*<diagnostics:error:wrong:ts>
Type 'number' is not assignable to type 'string'.ts(2322)
</diagnostics:error:wrong:ts>*/
*** End Language Server Response
"""

COMMANDS = f"""*** Begin Language Server Request
*** File: {TEST_FILE}
[@ const vS = schemaNumber({{ unit: volts }})
@@ const eq = math({{ v: vS, a: aS }}, `v * a`)
! eq RENAME_TO powerEquation
@@ const res = eq.evaluate({{ v: 230, a: 5 }})
! res RENAME_TO power
@) const wrong: string = 42
! MOVE_TO_FILE {NEW_FILE}
*** End Language Server Request
"""

COMMANDS_RESPONSE = f"""*** Begin Language Server Response
*** File: {TEST_FILE}
@@ const wrong: string = 42
/*<diagnostics:error:wrong:ts>
Type 'number' is not assignable to type 'string'.ts(2322)
</diagnostics:error:wrong:ts>*/
*** File: {NEW_FILE}
@@ const vS = schemaNumber({{ unit: volts }})
@@ const powerEquation = math({{ v: vS, a: aS }}, `v * a`)
@@ const power = powerEquation.evaluate({{ v: 230, a: 5 }})
*** End Language Server Response
"""


@pytest.fixture(scope="module", params=TS_SERVERS)
def dataflow(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Bridge, Path]]:
    root = tmp_path_factory.mktemp("lsreq") / "dataflow"
    shutil.copytree(FIXTURE, root)
    bridge = Bridge(root, [request.param])
    bridge.lua(SEED_INLAY[request.param])
    try:
        yield bridge, root
    finally:
        bridge.close()


def test_seed_query_exchange(dataflow: tuple[Bridge, Path]) -> None:
    bridge, _root = dataflow
    response = bridge.loop.run(bridge.service.handle_text(QUERY))
    assert response.ok, response.text
    assert response.text == QUERY_RESPONSE


def test_seed_command_exchange(dataflow: tuple[Bridge, Path]) -> None:
    bridge, root = dataflow
    response = bridge.loop.run(bridge.service.handle_text(COMMANDS))
    assert response.ok, response.text
    assert response.text == COMMANDS_RESPONSE
    moved = (root / NEW_FILE).read_text()
    assert "const powerEquation = math({ v: vS, a: aS }, `v * a`)" in moved
    assert "const power = powerEquation.evaluate({ v: 230, a: 5 })" in moved
    assert 'import { math } from "../../src/math"' in moved
    assert 'import { schemaNumber } from "../../src/schema"' in moved
    assert moved.endswith("})\n"), "one final newline, no empty last line"
    old = (root / TEST_FILE).read_text()
    assert old.strip() == "const wrong: string = 42", old
    # The compiler agrees: the only error left in the project is `wrong`.
    tsc = subprocess.run(
        [str(ROOT / "node_modules" / ".bin" / "tsc"), "-p", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in tsc.stdout.splitlines() if "error TS" in line]
    assert len(errors) == 1, tsc.stdout
    assert re.search(r"multiply-schemas\.test\.ts\(\d+,7\): error TS2322", errors[0]), tsc.stdout


def test_move_into_an_existing_file_exports_and_imports(dataflow: tuple[Bridge, Path]) -> None:
    bridge, root = dataflow
    (root / "packages/dataflow/test/operators/extra.test.ts").write_text(
        'import { schemaNumber } from "../../src/schema"\n'
        'import { amperes, volts } from "../../src/units"\n\n'
        "const vS2 = schemaNumber({ unit: volts })\n"
        "const aS2 = schemaNumber({ unit: amperes })\n"
        "type V2 = typeof vS2['infer']\n"
    )
    target = root / "packages/dataflow/src/presets.ts"
    target.write_text("export const answer = 42\n")
    text = bridge.loop.run(
        bridge.service.handle_text("""*** Begin Language Server Request
*** File: packages/dataflow/test/operators/extra.test.ts
[@ const vS2 = schemaNumber({ unit: volts })
@] const aS2 = schemaNumber({ unit: amperes })
! MOVE_TO_FILE packages/dataflow/src/presets.ts
*** End Language Server Request
""")
    ).text
    assert "/*<diagnostics:" not in text, text
    assert (
        "*** File: packages/dataflow/src/presets.ts\n@@ export const vS2 = schemaNumber({ unit: volts })\n"
        in text
    )
    presets = target.read_text()
    assert (
        presets.startswith('import { schemaNumber } from "../src/schema"')
        or "schemaNumber" in presets
    )
    assert "export const answer = 42\nexport const vS2 = schemaNumber({ unit: volts })\n" in presets
    assert (
        'import { vS2 } from "../../src/presets"'
        in (root / "packages/dataflow/test/operators/extra.test.ts").read_text()
    )


# A function indented by 2 spaces, nested 3 deep (moved as it is, in a 2-space project).
DOUBLE = (
    "export function double(values: number[]): number[] {\n"
    "  return values.map((value) => {\n"
    "    if (value > 0) {\n"
    "      return value * 2\n"
    "    }\n"
    "    return 0\n"
    "  })\n"
    "}"
)


def test_move_keeps_the_projects_two_space_indent(dataflow: tuple[Bridge, Path]) -> None:
    # Issue 35: tsserver writes moved code in its default 4-space indent unless told the
    # file's own (its `configure` request, from the file's code lines: the JSDoc's ` * ` is
    # no 1-space indent).
    bridge, root = dataflow
    source = root / "packages/dataflow/src/nested.ts"
    source.write_text(f"/**\n * Doubles.\n */\n{DOUBLE}\n\nexport const kept = 1\n")
    response = bridge.loop.run(bridge.service.handle_text("""*** Begin Language Server Request
*** File: packages/dataflow/src/nested.ts
[@ export function double(values: number[]): number[] {
@) export const kept = 1
! MOVE_TO_FILE packages/dataflow/src/doubled.ts
*** End Language Server Request
"""))
    assert response.ok and "/*<error:" not in response.text, response.text
    moved = (root / "packages/dataflow/src/doubled.ts").read_text()
    assert DOUBLE in moved, moved
    assert source.read_text().strip().endswith("export const kept = 1")
