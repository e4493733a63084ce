"""The kernels run the instruction-set versions the CPU has.

The exp kernels pick their version at run time from the CPU feature words
of the compiler's runtime (``__builtin_cpu_supports``, src/vexp.c), the same
words the resolvers of the ``target_clones`` functions read.  A runtime that
leaves them empty (Zig's, which builds the release wheels) silently runs
every kernel in its baseline version; src/cpu_model.c fills them in then.
The oracle here is the operating system's own view of the CPU.
"""
import pathlib
import platform
import sys

import pytest

from onlinepca_fast import _kernels

X86_LINUX = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def _cpuinfo_flags():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    raise AssertionError("no flags line in /proc/cpuinfo")


@pytest.mark.skipif(not X86_LINUX, reason="the oracle is Linux's /proc/cpuinfo on x86-64")
def test_detected_level_matches_proc_cpuinfo():
    """Level 2 = AVX-512 F/DQ/VL with FMA, 1 = AVX2 with FMA, 0 = baseline,
    exactly as the flags the kernel reports (it drops the flags whose
    registers the OS does not save)."""
    flags = _cpuinfo_flags()
    if {"avx2", "fma", "avx512f", "avx512dq", "avx512vl"} <= flags:
        expected = 2
    elif {"avx2", "fma"} <= flags:
        expected = 1
    else:
        expected = 0
    assert _kernels.detected_cpu_level() == expected, sorted(
        flags & {"avx2", "fma", "avx512f", "avx512dq", "avx512vl"})
    assert _kernels.cpu_level() == expected, sorted(
        flags & {"avx2", "fma", "avx512f", "avx512dq", "avx512vl"})
