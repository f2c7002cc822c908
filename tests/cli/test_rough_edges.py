"""Rough edges a plugin author meets on the command line: help text, closed pipes, config
mistakes reported all at once with hints, and the warnings and errors around plugins."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def kubesched(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *args], capture_output=True, text=True, timeout=120
    )


def _subcommands() -> list[list[str]]:
    found: list[list[str]] = [[]]
    pending = [([], build_parser())]
    while pending:
        prefix, parser = pending.pop()
        for action in parser._subparsers._group_actions if parser._subparsers else ():
            for name, sub in action.choices.items():
                found.append([*prefix, name])
                pending.append(([*prefix, name], sub))
    return sorted(found)


@pytest.mark.parametrize("command", _subcommands(), ids=lambda c: " ".join(c) or "kubesched")
def test_help_is_plain_text_with_a_whole_description(command):
    result = kubesched(*command, "--help")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "`" not in text, text  # no RST/Markdown literals
    assert ":class:" not in text and ":func:" not in text
    description = text.split("\n\n")[1]
    assert not description.startswith(("positional arguments", "options")), text
    assert description.rstrip().endswith("."), description  # a sentence, not cut off


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["plugins", "-o", "json"], id="plugins"),
        pytest.param(["simulate", "-o", "json"], id="simulate"),
    ],
)
def test_a_closed_pipe_ends_quietly_as_sigpipe_would(command):
    # `kubesched plugins -o json | head -1`: the reader is gone before the output is written.
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err.decode() and "BrokenPipe" not in err.decode(), err.decode()
    assert proc.returncode == 141  # 128 + SIGPIPE: what a shell shows for `yes | head -1`


MISTAKES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: custom-scheduler
    plugins:
      filter:
        enabled:
          - name: NodeResourceFit
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy: {type: Bogus}
"""


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["config", "validate", "{config}"], id="config-validate"),
        pytest.param(["simulate", "--config", "{config}"], id="simulate"),
        pytest.param(["explain", "--config", "{config}", "test-pod"], id="explain"),
        pytest.param(["run", "--config", "{config}"], id="run"),
    ],
)
def test_every_mistake_of_a_file_in_one_run(tmp_path, command):
    path = tmp_path / "config.yaml"
    path.write_text(MISTAKES)
    result = kubesched(*(part.format(config=path) for part in command))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"error: {path}: invalid configuration (2 errors):" in result.stderr
    assert (
        'profiles[0].plugins.filter.enabled[0]: unknown plugin "NodeResourceFit" '
        '(did you mean "NodeResourcesFit"?); installed: '
    ) in result.stderr
    assert (
        'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Bogus"'
    ) in result.stderr


def test_a_plugin_enabled_at_only_some_of_its_points_is_a_warning(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: custom-scheduler
    plugins:
      multiPoint:
        enabled: [{name: PrioritySort}, {name: DefaultBinder}]
        disabled: [{name: "*"}]
      filter:
        enabled: [{name: NodeResourcesFit}]
""")
    result = kubesched("config", "validate", str(path))
    assert result.returncode == 0, result.stderr
    assert (
        'warning: profiles[0].plugins.filter.enabled[0]: plugin "NodeResourcesFit" also '
        "implements preFilter, preScore, score, where it is not enabled; enable it under "
        "profiles[0].plugins.multiPoint to run it at every point it implements, or disable it "
        "at preFilter, preScore, score if that is meant"
    ) in result.stderr.splitlines()
