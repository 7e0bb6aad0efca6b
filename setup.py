"""The compiled kernel of flexmbs (csrc/index3_kernel.c), built when a C compiler is present.

Everything else is in pyproject.toml.  The extension is optional: without a compiler the
install goes on and flexmbs runs its numpy path (flexmbs.compiled says why).  It is a
top-level module, ``_flexmbs_kernel``, so that a source checkout that imports ``flexmbs`` from
the working tree (the test command of the README) still finds the installed kernel.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("_flexmbs_kernel", sources=["csrc/index3_kernel.c"], optional=True,
                             extra_compile_args=["-O3", "-std=c99"])])
