"""Native clients generated from ``openapi.yaml`` as a mobile developer generates them
(docs/clients.md, docs/decisions.md D-contract-native): ``openapi-generator`` (the PyPI
``openapi-generator-cli`` wheel of the dev extras, on the machine's JDK) validates the
document and generates ``kotlin`` and ``typescript-fetch`` clients with no warning about
the schema; each union of answers decodes by its tag; the streams are left to an SSE
client; the TypeScript client compiles with ``tsc --strict`` (npm ``typescript``, pinned,
kept in the user's cache), and a small TypeScript program using it plays round 1
by polling against the served app (uvicorn on a free port, on a thread of the test process).

The generated clients are kept in the user's cache by the hash of the document, the
generator and its options (:mod:`tests.tool_cache`): a rerun with an unchanged document,
in this clone or a fresh one, only compiles and plays. No JDK or no Node is a failure,
never a skip."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.api.served import ROOT, served_here
from tests.documents import repository_yaml
from tests.tool_cache import key_of, tool_output

TYPESCRIPT = "5.9.3"
"""npm ``typescript``, pinned (installed by this test into the user's cache)."""
GENERATORS: dict[str, list[str]] = {
    "kotlin": [
        "--additional-properties",
        "serializationLibrary=kotlinx_serialization,generateOneOfAnyOfWrappers=true",
    ],
    "typescript-fetch": ["--additional-properties", "supportsES6=true"],
}
"""Each generator and its options: Kotlin with kotlinx.serialization, whose unions are
sealed interfaces decoded by their discriminator (docs/clients.md)."""
NOT_ABOUT_THE_SCHEMA = "OpenAPI 3.1 support is still in beta"
"""The one warning the generator prints for every 3.1 document: about itself."""
JVM_ENV = {**os.environ, "JAVA_OPTS": "-XX:TieredStopAtLevel=1"}
"""The generator's JVM compiles with its quick compiler only (the wrapper passes JAVA_OPTS
on): a run of a few seconds never pays for the optimising one (the same output, about
half the CPU)."""
PROGRAM = Path(__file__).with_name("play_round.ts")
PLATFORM_WORDS = (
    "Any Array Bool Boolean Character Codable Collection Data Date Decimal Double Duration "
    "Error Event Exception File Float Int Iterable List Locale Long Map Nothing Number "
    "Object Optional Promise Record Request Response Result Sequence Set String Type "
    "Unit URL URI UUID Void"
)
PLATFORM_NAMES = frozenset(PLATFORM_WORDS.split())
"""Model names that clash with a platform's type in Swift, Kotlin or TypeScript."""


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is needed to check the generated clients (README: make test)"
    return found


def _run(args: list[str], cwd: Path, timeout: float = 600) -> str:
    run = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert run.returncode == 0, f"{' '.join(args)}\n{run.stdout}\n{run.stderr}"
    return run.stdout + run.stderr


@pytest.fixture(scope="module")
def generated() -> Path:
    """The folder of the validation log and the generated clients (``kotlin/``,
    ``typescript-fetch/``, each with its ``.log``), made once per document, generator and
    options (:mod:`tests.tool_cache`: pytest-xdist may run this module's tests on two
    workers at once, and a fresh clone reuses an unchanged document's)."""
    _tool("java")
    generator = _tool("openapi-generator-cli")
    document = ROOT / "openapi.yaml"
    version = importlib.metadata.version("openapi-generator-cli")  # the jar it ships
    key = key_of(document.read_bytes(), json.dumps([version, GENERATORS]))
    return tool_output("clients", key, lambda folder: _generate(generator, document, folder))


def _generate(generator: str, document: Path, folder: Path) -> None:
    commands = {"validate": [generator, "validate", "-i", str(document)]}
    for name, options in GENERATORS.items():
        out = str(folder / name)
        commands[name] = [generator, "generate", "-i", str(document), "-g", name, "-o", out]
        commands[name] += options
    with ExitStack() as logs:
        runs = {
            name: subprocess.Popen(
                args,
                cwd=ROOT,
                env=JVM_ENV,
                stdout=logs.enter_context((folder / f"{name}.log").open("w")),
                stderr=subprocess.STDOUT,
            )
            for name, args in commands.items()
        }
        for name, process in runs.items():
            assert process.wait(timeout=600) == 0, (folder / f"{name}.log").read_text()


def test_the_document_validates_without_warnings(generated: Path) -> None:
    log = (generated / "validate.log").read_text()
    assert "No validation issues detected." in log, log
    assert "Warnings" not in log and "Errors" not in log, log


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_the_generators_have_no_warning_about_the_schema(generated: Path, name: str) -> None:
    warnings = [
        line
        for line in (generated / f"{name}.log").read_text().splitlines()
        if ("WARN" in line or "ERROR" in line) and NOT_ABOUT_THE_SCHEMA not in line
    ]
    assert warnings == []


def test_no_model_is_named_like_a_platform_type() -> None:
    document = repository_yaml("openapi.yaml")
    assert set(document["components"]["schemas"]) & PLATFORM_NAMES == set()


def _kotlin_model(generated: Path, name: str) -> str:
    models = generated / "kotlin/src/main/kotlin/org/openapitools/client/models"
    return (models / f"{name}.kt").read_text()


@pytest.mark.parametrize(
    ("union", "tags"),
    [("CommandDoneOrDryRun", ("done", "dryRun")), ("SeatViewOrPublicView", ("seat", "public"))],
)
def test_kotlin_decodes_each_answer_of_a_union_by_its_tag(
    generated: Path, union: str, tags: tuple[str, ...]
) -> None:
    """The command's answer (a done command or a dry run) and a viewer's view (a seat's
    or a spectator's, R33) are sealed interfaces, decoded by ``kind``."""
    source = _kotlin_model(generated, union)
    assert f"sealed interface {union}" in source
    assert 'element["kind"]' in source
    for tag in tags:
        assert f'"{tag}" ->' in source


def test_cards_are_a_list_of_strings_in_every_client(generated: Path) -> None:
    """A command carries its cards (R17-R23): one type, never an empty wrapper class."""
    kotlin = _kotlin_model(generated, "ActionRequest")
    assert re.search(r"val cards: kotlin\.collections\.List<kotlin\.String>", kotlin), kotlin
    typescript = (generated / "typescript-fetch/models/ActionRequest.ts").read_text()
    assert re.search(r"cards\?: Array<string>;", typescript), typescript


def test_the_streams_are_left_to_an_sse_client(generated: Path) -> None:
    """No generated method waits on a stream until its read timeout: every
    ``text/event-stream`` operation is ``x-internal`` and names its AsyncAPI channel."""
    document = repository_yaml("openapi.yaml")
    streams = {
        op["operationId"]: op
        for item in document["paths"].values()
        for op in item.values()
        if "text/event-stream" in op["responses"].get("200", {}).get("content", {})
    }
    assert set(streams) >= {"streamMatch", "streamEvents", "streamPlayer", "streamStandings"}
    asyncapi = repository_yaml("asyncapi.yaml")
    for name, op in streams.items():
        assert op["x-internal"] is True, name
        channel = op["x-server-sent-events"]["channel"].removeprefix("#/channels/")
        assert channel in asyncapi["channels"], name
        for client in GENERATORS:
            sources = "".join(p.read_text() for p in (generated / client).rglob("*Api.*t*"))
            assert name not in sources, (client, name)


def _typescript() -> Path:
    """``tsc`` of the pinned ``typescript``, installed once (:mod:`tests.tool_cache`)."""

    def install(prefix: Path) -> None:
        args = ["install", "--prefix", str(prefix), "--no-audit", "--no-fund"]
        _run([_tool("npm"), *args, f"typescript@{TYPESCRIPT}"], ROOT)

    prefix = tool_output("npm", key_of("typescript", TYPESCRIPT), install)
    return prefix / "node_modules" / ".bin" / "tsc"


def _compiled(app: Path) -> Path:
    """``tsc -p app``'s output (``out/``), kept by the content of every file it compiles,
    its configuration and the compiler's version (:mod:`tests.tool_cache`): the same
    sources compile to the same files, and ``tsc --strict`` is ~9 CPU-s (docs/decisions.md
    D-suite2); a source that changes is compiled (and checked) again."""
    parts: list[bytes | str] = ["tsc", TYPESCRIPT]
    for path in sorted(p for p in app.rglob("*") if p.is_file()):
        parts += [path.relative_to(app).as_posix(), path.read_bytes()]

    def compile_into(folder: Path) -> None:
        _run(
            [_tool("node"), str(_typescript()), "-p", str(app), "--outDir", str(folder / "out")],
            app,
        )

    return tool_output("tsc", key_of(*parts), compile_into)


def test_a_typescript_app_plays_a_round_by_polling(generated: Path, tmp_path: Path) -> None:
    """The TypeScript client compiles with ``tsc --strict`` and an app using it plays
    round 1 to its end (R16: 25 cards a seat; R35: the seed is revealed and verifies)."""
    node = _tool("node")
    app = tmp_path / "app"
    shutil.copytree(generated / "typescript-fetch", app / "client")
    shutil.copy(PROGRAM, app / PROGRAM.name)
    (app / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "strict": True,
                    "target": "es2020",
                    "module": "commonjs",
                    "lib": ["es2020", "dom"],
                    "types": [],
                    "outDir": "out",
                },
                "files": [PROGRAM.name],
            }
        )
    )
    shutil.copytree(_compiled(app) / "out", app / "out")
    with served_here(tmp_path) as base:  # the client is node, outside this process
        out = _run([node, str(app / "out" / "play_round.js"), base], app, timeout=300)
    played = json.loads(out.strip().splitlines()[-1])
    assert played["cardsPlayed"] == 25 and played["moves"]["dryRuns"] >= 1, played
    assert played["seedLength"] == 64 and played["verified"] is True, played
