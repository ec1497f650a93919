// LinuxHaptics: the engine, its players and clock, recovery, HapticManager and the feedback vocabulary.
