"""models.yaml: bad input fails at start naming file, entry and key; missing keys fail once."""

from __future__ import annotations

import textwrap

import pytest

from pytest_agentic.run.models import ModelsFileError, load_registry

from .helpers import ROOT


def write(tmp_path, text):
    path = tmp_path / "models.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("models: [a, b]\n", ["'models' mapping"]),
        ("models:\n  m1: {model: openai/x, temprature: 0}\n", ["entry 'm1'", "unknown key 'temprature'"]),
        ("models:\n  m1: {params: {}}\n", ["entry 'm1'", "key 'model'"]),
        ("models:\n  m1: {model: gpt4}\n", ["entry 'm1'", "key 'model'", "provider/name"]),
        ("models:\n  m1: {model: openai/x, price: {input_per_token: -1, output_per_token: 0}}\n",
         ["entry 'm1'", "price.input_per_token"]),
        ("models:\n  m1: {model: openai/x, price: {input: 1}}\n", ["entry 'm1'", "price.input"]),
        ("models:\n  m1: {model: openai/x, params: {model: y}}\n", ["entry 'm1'", "key 'params'", "model"]),
        ("models:\n  m1: {model: openai/x, limits: {max_turn: 3}}\n", ["entry 'm1'", "unknown limit 'max_turn'"]),
        ("models:\n  m1: {model: openai/x, limits: {max_turns: many}}\n", ["entry 'm1'", "max_turns"]),
        ("models:\n  m1: {model: openai/x, server: {kind: ollama}}\n", ["entry 'm1'", "server.kind"]),
        ("models:\n  m1: {model: openai/x, server: {kind: llama.cpp, gguf: g, ctx_size: 4096},\n"
         "       params: {max_tokens: 4096}}\n", ["entry 'm1'", "params.max_tokens", "server.ctx_size 4096",
                                                  "at most 2048"]),
        ("models:\n  m1: {model: openai/x}\ndefault: m2\n", ["'default'", "m2"]),
        ("models:\n  m1: {model: openai/x\n", ["not valid YAML"]),
    ],
)
def test_malformed_entries_are_named(tmp_path, text, needles):
    path = write(tmp_path, text)
    with pytest.raises(ModelsFileError) as info:
        load_registry(path)
    message = str(info.value)
    assert str(path) in message
    for needle in needles:
        assert needle in message


def test_shipped_models_file_is_valid():
    registry = load_registry(ROOT / "models.yaml")
    assert {"oracle", "near-miss", "nemotron-nano-3-30b", "qwen3-coder-30b", "gpt-oss-20b"} <= set(registry.entries)
    assert all(e.name in registry.entries for e in registry.select([]))
    assert not any(e.scripted for e in registry.select(["all"]))


def test_unknown_model_fails_before_any_run(pytester):
    pytester.makefile(".yaml", models="models:\n  oracle: {model: agentic-scripted/oracle}\n")
    result = pytester.runpytest_subprocess("--model", "gpt-7")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--model 'gpt-7': no such entry in *models.yaml; known: oracle*"])


def test_bad_models_file_fails_at_start(pytester):
    pytester.makefile(".yaml", models="models:\n  m1: {model: openai/x, tempreature: 1}\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--model", "m1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*models.yaml: entry 'm1': unknown key 'tempreature'*"])


def test_missing_api_key_fails_once_before_the_first_run(pytester, monkeypatch):
    monkeypatch.delenv("AGENTIC_TEST_MISSING_KEY", raising=False)
    pytester.makefile(".yaml", models="models:\n  hosted: {model: openai/gpt-x, api_key_env: AGENTIC_TEST_MISSING_KEY}\n")
    pytester.makepyfile(test_t='''
        from pytest_agentic import Final, TaskInstance, task
        @task("t1", "t", build=lambda seed: TaskInstance(prompt="p", files={}, tools=(), reference=[Final("x")]))
        def test_t(agent):
            agent.run()
    ''')
    for extra in ([], ["-n", "2"]):
        result = pytester.runpytest_subprocess("--model", "hosted", "--agentic-out", "out", *extra)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        text = result.stderr.str()
        assert text.count("AGENTIC_TEST_MISSING_KEY") == 1, text
        assert "model 'hosted'" in text
        assert not (pytester.path / "out").exists()


def test_agent_fixture_without_task_declaration_is_refused(pytester):
    pytester.makefile(".yaml", models="default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n")
    pytester.makepyfile(test_bare="def test_bare(agent):\n    agent.run()\n")
    result = pytester.runpytest_subprocess("--agentic-out=out")
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_bare.py::test_bare: uses the 'agent' fixture but is not declared with "
                                 "@pytest_agentic.task(...)*"])
    assert not (pytester.path / "out").exists()
