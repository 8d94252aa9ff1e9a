"""Running the commands of a Markdown page as a newcomer copies them, shared by the README's test
and the test of docs/: each ```sh block is run from a folder laid out like the repository's
root, offline (downloads go to a closed port), at 80 columns, with the virtualenv's bin first on
PATH as `. .venv/bin/activate` would put it. A plain block that opens with `$ command` shows
that command's output, and the command must print the lines shown. A ```text block is a
synopsis: `arrivalbench COMMAND` lines (a line that opens with spaces goes on with the one
above), whose options are checked against the command's own (`synopsis_problems`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from conftest import TINY_YAML, write_task

ROOT = Path(__file__).parents[1]

# Exit status 1 is a verdict, not a failure, for commands that grade or explain.
MAY_FAIL = ("arrivalbench grade ", "arrivalbench explain ")


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """(language, lines) of every fenced block."""
    return [(lang, body.splitlines())
            for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)]


def commands(text: str) -> list[str]:
    found = []
    for lang, lines in blocks(text):
        if lang == "sh":
            joined = "\n".join(lines).replace("\\\n", " ")
            found += [line.split("  #")[0].strip() for line in joined.splitlines()
                      if line.strip() and not line.startswith("#")]
    return found


def shown_outputs(text: str) -> list[tuple[str, list[str]]]:
    """`$ command` lines of plain blocks, with the lines shown after them."""
    return [(lines[0][2:], lines[1:]) for lang, lines in blocks(text)
            if lang == "" and lines and lines[0].startswith("$ ")]


def links(text: str) -> list[str]:
    """Relative targets of Markdown links and images (a `#fragment` kept; a link within the
    page is `#fragment` alone)."""
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def anchors(text: str) -> set[str]:
    """The fragments GitHub gives the page's headings: lower case, punctuation dropped but
    `-`, spaces as `-`."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, re.M)}


def clone(folder: Path) -> Path:
    """The repository's root as a newcomer sees it, with the pages' stand-ins written:
    `my_pipeline.sql` (a gold) and `./my_task/` (a task folder named after its id)."""
    (folder / "src").symlink_to(ROOT / "src")
    (folder / "examples").symlink_to(ROOT / "examples")
    shutil.copy(ROOT / "src/arrivalbench/tasks/store_daily_revenue/gold.sql",
                folder / "my_pipeline.sql")
    write_task(folder, name="my_task", spec={**TINY_YAML, "id": "my_task"})
    return folder


def shell(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("INSPECT_LOG_DIR", None)
    env.pop("ARRIVALBENCH_RESULTS", None)
    closed = "http://127.0.0.1:9"
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               COLUMNS="80", HTTP_PROXY=closed, HTTPS_PROXY=closed, http_proxy=closed,
               https_proxy=closed, NO_PROXY="", no_proxy="",
               TIKTOKEN_CACHE_DIR=str(root / ".tiktoken"),
               XDG_CACHE_HOME=str(root / ".cache"))  # grade --data's derived tasks
    return subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900, check=False)


def run_commands(root: Path, text: str, skip: dict[str, str]) -> None:
    """Every command of `text` but the skipped ones exits 0 (or 1 for a verdict), with no
    traceback."""
    for command in commands(text):
        if command in skip:
            continue
        done = shell(root, command)
        allowed = (0, 1) if command.startswith(MAY_FAIL) else (0,)
        assert done.returncode in allowed, (command, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])


def check_shown_outputs(root: Path, text: str, skip: dict[str, str]) -> None:
    """Every `$ command` shown with its output prints the lines shown (a long line may wrap
    between words; a line starting with `…` stands for lines left out)."""
    for command, shown in shown_outputs(text):
        if command in skip:
            continue
        done = shell(root, command)
        printed = " ".join(done.stdout.split())
        for line in shown:
            if line.strip() and not line.strip().startswith("…"):
                assert " ".join(line.split()) in printed, (command, line)


@dataclass(frozen=True)
class Usage:
    """One option as a synopsis writes it: `--seeds N`, `[--task T]...`, `--compare A B`."""

    name: str
    values: tuple[str, ...]  # the words after it: placeholders (`N`), choices (`a|b`), values
    repeated: bool  # `...` right after it or its brackets, or the option given twice


@dataclass(frozen=True)
class Synopsis:
    line: str
    command: str  # the word after `arrivalbench`
    options: tuple[Usage, ...]
    partial: bool  # a `...` of its own: the command's other options as usual


def synopses(text: str) -> list[list[Synopsis]]:
    """The synopses of every ```text block, each line with the lines that go on from it (a
    `  # comment` left out). Brackets and `(a | b)` only group; the options are read in order,
    each with the words up to the next option: so a synopsis writes its command's arguments
    before the options."""
    found = []
    for lang, lines in blocks(text):
        if lang != "text":
            continue
        joined: list[str] = []
        for line in lines:
            line = line.split("  #")[0].rstrip()
            if line[:1].isspace() and joined:
                joined[-1] += " " + line.strip()
            elif line:
                joined.append(line)
        found.append([_synopsis(line) for line in joined])
    return found


def _synopsis(line: str) -> Synopsis:
    words = line.split()
    command = words[1] if len(words) > 1 and words[0] == "arrivalbench" else ""
    partial = "..." in words
    options: list[tuple[str, list[str], bool]] = []
    for word in words[2:]:
        if word in ("...", "|"):
            continue
        core, dots = word.lstrip("[("), False
        while True:  # trailing `]`, `)`, `...`; a metavar's own brackets stay (`COL[,COL]`)
            if core.endswith("...") and len(core) > 3:
                core, dots = core[:-3], True
            elif core.endswith(")") or (core.endswith("]")
                                        and core.count("]") > core.count("[")):
                core = core[:-1]
            else:
                break
        if core.startswith("-"):
            options.append((core, [], dots))
        elif options:  # a word before the first option is one of the command's arguments
            name, values, repeated = options[-1]
            options[-1] = (name, [*values, core], repeated or dots)
    names = [name for name, _, _ in options]
    again = {name for name in names if names.count(name) > 1}
    return Synopsis(line, command,
                    tuple(Usage(n, tuple(v), r or n in again) for n, v, r in options), partial)


def synopsis_problems(block: list[Synopsis], app: click.Group) -> list[str]:
    """What the synopses of a block say about each command that the command does not do: an option
    it has not got, a flag shown with a value or an option without its value(s), an option
    shown repeatable or not unlike the command, choices (`a|b`, or a value in lower case) that
    are not the option's. And, unless every synopsis of a command in the block is partial,
    the options of the command that none of them names."""
    problems = []
    named: dict[str, set[str]] = {}
    for synopsis in block:
        command = app.commands.get(synopsis.command)
        if command is None:
            problems.append(f"{synopsis.line!r}: no such command")
            continue
        options = {name: p for p in command.params if isinstance(p, click.Option)
                   for name in (*p.opts, *p.secondary_opts)}
        seen = named.setdefault(synopsis.command, set()) if not synopsis.partial else set()
        for usage in synopsis.options:
            option = options.get(usage.name)
            if option is None:
                problems.append(f"{synopsis.line!r}: {synopsis.command} has no {usage.name}")
                continue
            seen.add(_name(option))
            problems += [f"{synopsis.line!r}: {usage.name} {p}" for p in _misused(option, usage)]
    for name, seen in named.items():
        command = app.commands[name]
        every = {_name(p) for p in command.params
                 if isinstance(p, click.Option) and not p.hidden}
        if every - seen:
            problems.append(f"the synopsis of {name} leaves out {sorted(every - seen)}")
    return problems


def _name(option: click.Option) -> str:
    return max(option.opts, key=len)  # `--model-arg`, not `-M`


def _misused(option: click.Option, usage: Usage) -> list[str]:
    takes = 0 if option.is_flag or option.count else option.nargs
    problems = []
    if len(usage.values) != takes:
        problems.append(f"takes {takes} value(s), shown with {list(usage.values)}")
    if usage.repeated != option.multiple:
        problems.append("is repeatable" if option.multiple else "is not repeatable")
    if isinstance(option.type, click.Choice):
        choices = {str(c) for c in option.type.choices}
        for value in usage.values:
            if "|" in value and set(value.split("|")) != choices:
                problems.append(f"takes {'|'.join(sorted(choices))}, shown as {value}")
            elif "|" not in value and value != value.upper() and value not in choices:
                problems.append(f"takes {'|'.join(sorted(choices))}, shown with {value}")
    return problems
