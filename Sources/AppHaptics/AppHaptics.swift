// The app layer sits on the engine and hands it on: `import AppHaptics` gives an app HapticManager and the
// engine's types (HapticEngine, players, patterns' errors) it meets through it, in one import; and the locality
// the manager's initializer takes (`HapticManager(actuators:locality:)`), which the renderer's module defines, so
// that an app can name it (store a choice, parse a setting) without importing that module.
@_exported public import LinuxHaptics
@_exported public import enum HapticRendering.HapticLocality
