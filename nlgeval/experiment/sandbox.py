"""A throw-away experiment to try functions on: the example study of
:func:`~nlgeval.experiment.example.write_example`, written (and, as needed, created, opened or
served by a test app) in a temporary folder that is removed afterwards. For docstring examples
and tests of what reads an experiment folder or database.

Each set-up builds on the one before: :func:`example_folder` (the study folder, or its
configuration: :func:`example_config`) -> :func:`example_study_folder` (the created
experiment) -> :func:`example_experiment` (its database and configuration) or
:func:`example_app` (a Flask app serving it) -> :func:`example_evaluator` (a browser on the
first evaluator's link).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from nlgeval.experiment.app import create_app
from nlgeval.experiment.build import CreatedExperiment, create_experiment
from nlgeval.experiment.config import ExperimentConfig, load_config
from nlgeval.experiment.example import ExampleMode, write_example
from nlgeval.experiment.storage import Store

Mode = ExampleMode  # absolute, relative, triangle, mqm, esa or bws

__all__ = [
    "example_app", "example_config", "example_evaluator", "example_experiment", "example_folder",
    "example_study_folder",
]


@contextmanager
def example_folder(mode: Mode = "absolute") -> Iterator[Path]:
    """The example study's folder (``mode``) written by
    :func:`~nlgeval.experiment.example.write_example` in a temporary folder, not created as
    an experiment yet; removed on leaving the ``with`` block.

    Examples
    --------
    >>> with example_folder("triangle") as folder:
    ...     print(load_config(folder).mode)
    triangle
    >>> folder.exists()
    False
    """
    with tempfile.TemporaryDirectory() as tmp:
        yield write_example(Path(tmp) / "study", mode)


@contextmanager
def example_config(mode: Mode = "absolute") -> Iterator[ExperimentConfig]:
    """The configuration (:func:`~nlgeval.experiment.config.load_config`) of the example
    study's folder (``mode``) of :func:`example_folder`, not created as an experiment: for
    what plans trials from the materials; the folder is removed on leaving the ``with`` block.

    Examples
    --------
    >>> with example_config("relative") as cfg:
    ...     print(cfg.mode, cfg.directory.name)
    relative study
    """
    with example_folder(mode) as folder:
        yield load_config(folder)


@contextmanager
def example_study_folder(
    mode: Mode = "absolute", *, evaluators: int = 3
) -> Iterator[CreatedExperiment]:
    """The example study (``mode``) created by
    :func:`~nlgeval.experiment.build.create_experiment` for ``evaluators`` evaluators in a
    temporary folder: yields what ``create_experiment`` returns (directory, database,
    evaluator links); the folder is removed on leaving the ``with`` block.

    Examples
    --------
    >>> with example_study_folder(evaluators=6) as made:
    ...     print(made.directory.name, len(made.evaluators))
    study 6
    """
    with example_folder(mode) as folder:
        yield create_experiment(folder, evaluators=evaluators)


@contextmanager
def example_experiment(
    mode: Mode = "absolute", *, evaluators: int = 3
) -> Iterator[tuple[Store, ExperimentConfig]]:
    """The example study (``mode``) created for ``evaluators`` evaluators in a temporary
    folder: yields its database and configuration, with nothing judged yet; the database is
    closed and the folder removed on leaving the ``with`` block.

    Examples
    --------
    >>> with example_experiment("relative") as (store, cfg):
    ...     print(cfg.mode, store.meta()["systems"])
    relative ["human", "neural", "template"]
    """
    with example_study_folder(mode, evaluators=evaluators) as made:
        store = Store(made.database)
        try:
            yield store, load_config(made.directory)
        finally:
            store.dispose()


@contextmanager
def example_app(
    mode: Mode = "absolute", *, evaluators: int = 3
) -> Iterator[tuple[Flask, CreatedExperiment]]:
    """The Flask app of :func:`~nlgeval.experiment.app.create_app` serving the example study
    (``mode``, ``evaluators`` evaluators) created in a temporary folder: yields the app and
    what ``create_experiment`` returned (for the evaluator and researcher links); the app's
    database is closed and the folder removed on leaving the ``with`` block.

    Examples
    --------
    >>> with example_app() as (app, made):
    ...     print(app.test_client().get(f"/r/{made.researcher_token}").status_code)
    200
    """
    with example_study_folder(mode, evaluators=evaluators) as made:
        app = create_app(made.directory)
        try:
            yield app, made
        finally:
            app.extensions["nlgeval_experiment"]["store"].dispose()


@contextmanager
def example_evaluator(
    mode: Mode = "absolute", *, evaluators: int = 3
) -> Iterator[tuple[FlaskClient, str, str]]:
    """The first evaluator of :func:`example_app`'s study, as a test browser that has opened
    its personal link (which sets the session's CSRF token): yields the client, the
    evaluator's token and the CSRF token every form must send; cleaned up as
    :func:`example_app` is.

    Examples
    --------
    >>> with example_evaluator() as (c, token, csrf):
    ...     print(c.post(f"/e/{token}/start", data={"csrf": csrf}).status_code)
    303
    """
    with example_app(mode, evaluators=evaluators) as (app, made):
        client = app.test_client()
        token = str(made.evaluators["token"].iloc[0])
        client.get(f"/e/{token}")
        with client.session_transaction() as session:
            csrf = str(session["csrf"])
        yield client, token, csrf
