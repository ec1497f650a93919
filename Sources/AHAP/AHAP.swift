// AHAP: the Apple Haptic and Audio Pattern format, modelled, parsed, validated and encoded. Pure: no Glibc, no I/O beyond reading a given URL.
