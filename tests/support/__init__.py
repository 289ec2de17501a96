"""Shared test infrastructure: a local package index with wheels shaped like PyTorch's.

See :mod:`tests.support.pkgindex` (building wheels, serving indexes) and
:mod:`tests.support.fixtures` (pytest fixtures, registered in ``tests/conftest.py``).
"""
