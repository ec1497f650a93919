// AHAP: the Apple Haptic and Audio Pattern format, modelled, parsed, validated and encoded. Pure: no Glibc, no
// device code, no I/O; it works on bytes and dictionaries, and AHAPFiles reads files for it.

/// Times in AHAP are seconds, relative to the start of the pattern (events, dynamic parameters, curves) or to the
/// start of the curve (control points).
public typealias AHAPTime = Double
