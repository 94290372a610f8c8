"""The SDK's version: one place, read by the build (pyproject's ``tool.hatch.version``) and by every module that
records it, without importing the package's public names."""

__version__ = "0.1.0"
