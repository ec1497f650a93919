// The app layer sits on the engine and hands it on: `import AppHaptics` gives an app HapticManager and the
// engine's types (HapticEngine, players, patterns' errors) it meets through it, in one import.
@_exported public import LinuxHaptics
