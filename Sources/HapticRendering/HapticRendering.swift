// HapticRendering: from an AHAP pattern to motor output over time. Pure: no Glibc, no I/O.
public import AHAP
